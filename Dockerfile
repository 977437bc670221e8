# Augure in a container: `augure run` as a non-root user, state in the /data volume
# (AUGURE_HOME), Chromium for the browser tool and bubblewrap for sandbox_exec.
# Build: docker build -t augure .   (or scripts/build-image, which also prints the size)
# Test: scripts/test-image builds it with podman and runs the browser and the sandbox inside.
# Run: docker compose up -d (see compose.yaml, docs/install.md)

# Stage 1: the locked dependencies, then Augure, into a virtualenv copied whole below.
FROM python:3.11-slim-bookworm AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
# A pip configuration for this stage only (an index, a CA bundle), from a folder mounted for
# the build (scripts/test-image mounts one on /mnt); none of it reaches the image.
ARG PIP_CONFIG_FILE
RUN python -m venv /opt/venv
# Only the locks first: this layer is rebuilt when a lock changes, not at every code change.
COPY requirements/runtime.txt requirements/build.txt /tmp/
RUN /opt/venv/bin/pip install --require-hashes -r /tmp/runtime.txt \
    && /opt/venv/bin/pip install --require-hashes -r /tmp/build.txt
COPY pyproject.toml setup.py README.md LICENSE /src/
COPY augure /src/augure
COPY memory /src/memory
COPY skills /src/skills
# The commit `augure --version` names (the image has no git checkout to ask).
ARG AUGURE_COMMIT=""
# With the build backend pinned and hashed above (--no-build-isolation: pip fetches no
# backend of its own); then pip and setuptools leave the virtualenv, so the image runs Augure
# and installs nothing.
RUN /opt/venv/bin/pip install --no-deps --no-build-isolation /src \
    && /opt/venv/bin/pip uninstall --yes pip setuptools

# Stage 2: what runs.
FROM python:3.11-slim-bookworm

# chromium-headless-shell: the browser tool (Chromium built for headless use only: no GTK,
# 180 MB less than the chromium package; Mesa and LLVM still come, through chromium-common's
# x11-utils); libatomic1: Playwright's driver needs it. bubblewrap + util-linux
# (setpriv, prlimit) + Debian's python3: the sandbox and what commands find inside it;
# slirp4netns: its network, when enabled, without the host's loopback. tini: PID 1, reaping
# what Chromium, MCP servers and bwrap leave behind and passing SIGTERM on. tzdata: TZ is
# honoured. ca-certificates: TLS. opus-tools: spoken replies from an endpoint that returns WAV
# (docs/voice.md).
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends \
        bubblewrap ca-certificates chromium-headless-shell libatomic1 opus-tools python3 \
        slirp4netns tini tzdata util-linux \
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
