# Augure in a container: `augure run` as a non-root user, state in the /data volume
# (AUGURE_HOME), Chromium for the browser tool and bubblewrap for sandbox_exec.
# Build: docker build -t augure .   Run: docker compose up -d (see compose.yaml, docs/install.md)
FROM python:3.11-slim-bookworm

# chromium: the browser tool. bubblewrap + util-linux (setpriv, prlimit) + Debian's python3:
# the sandbox and what commands find inside it; slirp4netns: its network, when enabled, without
# the host's loopback. tzdata: TZ is honoured. ca-certificates: TLS.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends \
        bubblewrap ca-certificates chromium python3 slirp4netns tzdata util-linux \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /opt/augure
COPY pyproject.toml README.md ./
COPY augure ./augure
COPY memory ./memory
COPY skills ./skills
RUN pip install --no-cache-dir '.[all]'

RUN useradd --create-home --uid 1000 --user-group augure \
    && mkdir -p /data \
    && chown augure:augure /data

# By number, so the host and `docker compose` resolve it the same way.
USER 1000:1000
ENV AUGURE_HOME=/data \
    TZ=UTC \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1
VOLUME ["/data"]

# `augure status` exits 0 while a bot runs on this home and 3 when none does.
HEALTHCHECK --interval=30s --timeout=10s --start-period=30s --retries=3 \
    CMD ["augure", "status"]

# `augure run` stops within 10 s of SIGTERM; compose.yaml gives it 20 s before SIGKILL.
STOPSIGNAL SIGTERM
CMD ["augure", "run"]
