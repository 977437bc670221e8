# Augure in a container: state lives in the /data volume (AUGURE_HOME).
FROM python:3.11-slim

WORKDIR /opt/augure
COPY pyproject.toml README.md ./
COPY augure ./augure
COPY memory ./memory
COPY skills ./skills
RUN pip install --no-cache-dir '.[all]' \
    && useradd --create-home --uid 1000 augure \
    && mkdir -p /data && chown augure:augure /data

USER augure
ENV AUGURE_HOME=/data \
    PYTHONUNBUFFERED=1
VOLUME ["/data"]
STOPSIGNAL SIGTERM
CMD ["augure", "run"]
