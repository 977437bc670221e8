# Augure in a container: `augure run` as a non-root user, state in the /data volume
# (AUGURE_HOME), Chromium for the browser tool and bubblewrap for sandbox_exec.
# Build: docker build -t augure .   (or scripts/build-image, which also prints the size)
# Run: docker compose up -d (see compose.yaml, docs/install.md)

# Stage 1: the locked dependencies, then Augure, into a virtualenv copied whole below; pip
# and its leftovers stay behind.
FROM python:3.11-slim-bookworm AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
RUN python -m venv /opt/venv
# Only the lock first: this layer is rebuilt when the lock changes, not at every code change.
COPY requirements/runtime.txt /tmp/runtime.txt
RUN /opt/venv/bin/pip install --require-hashes -r /tmp/runtime.txt
COPY pyproject.toml setup.py README.md LICENSE /src/
COPY augure /src/augure
COPY memory /src/memory
COPY skills /src/skills
# The commit `augure --version` names (the image has no git checkout to ask).
ARG AUGURE_COMMIT=""
RUN /opt/venv/bin/pip install --no-deps /src

# Stage 2: what runs.
FROM python:3.11-slim-bookworm

# chromium: the browser tool. bubblewrap + util-linux (setpriv, prlimit) + Debian's python3:
# the sandbox and what commands find inside it; slirp4netns: its network, when enabled, without
# the host's loopback. tini: PID 1, reaping what Chromium, MCP servers and bwrap leave behind
# and passing SIGTERM on. tzdata: TZ is honoured. ca-certificates: TLS. opus-tools: spoken
# replies from an endpoint that returns WAV (docs/voice.md).
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends \
        bubblewrap ca-certificates chromium opus-tools python3 slirp4netns tini tzdata util-linux \
    && rm -rf /var/lib/apt/lists/*

COPY --from=build /opt/venv /opt/venv

RUN useradd --create-home --uid 1000 --user-group augure \
    && mkdir -p /data \
    && chown augure:augure /data

# By number, so the host and `docker compose` resolve it the same way.
USER 1000:1000
ENV PATH=/opt/venv/bin:$PATH \
    AUGURE_HOME=/data \
    TZ=UTC \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1
VOLUME ["/data"]

# `augure status` exits 0 while a bot runs on this home and 3 when none does.
HEALTHCHECK --interval=30s --timeout=10s --start-period=30s --retries=3 \
    CMD ["augure", "status"]

# `augure run` stops within 10 s of SIGTERM; compose.yaml gives it 20 s before SIGKILL.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["augure", "run"]
