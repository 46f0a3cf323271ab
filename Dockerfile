# evigate: the gRPC service on embedded defaults (SQLite in /var/lib/evigate, bundled demo data,
# offline agents). Point it at MySQL/MariaDB with EVIGATE_DATABASE_URL; see README.md.
#
#   docker build -t evigate .
#   docker run -p 50051:50051 evigate

# --- build: a wheel of the project (generated/ included), made apart from the runtime image ---
FROM python:3.11-slim AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY pyproject.toml setup.py README.md ./
COPY generated ./generated
COPY rules ./rules
COPY storage ./storage
COPY server ./server
RUN pip wheel --no-deps --wheel-dir /wheels .

# --- runtime ---
FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    EVIGATE_STATE_DIR=/var/lib/evigate

COPY --from=build /wheels /wheels
RUN pip install /wheels/*.whl \
    && rm -rf /wheels \
    && groupadd --system --gid 10001 evigate \
    && useradd --system --uid 10001 --gid evigate --home-dir /var/lib/evigate --create-home \
       --shell /usr/sbin/nologin evigate

USER evigate:evigate
WORKDIR /var/lib/evigate
EXPOSE 50051

# Asks the standard gRPC health service for the whole server (service ""): exit 0 only when
# SERVING. Any error — refused connection, timeout, NOT_SERVING — is unhealthy.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["python", "-c", "import sys, grpc; from grpc_health.v1 import health_pb2 as h, health_pb2_grpc as g; r = g.HealthStub(grpc.insecure_channel('127.0.0.1:50051')).Check(h.HealthCheckRequest(service=''), timeout=3); sys.exit(0 if r.status == h.HealthCheckResponse.SERVING else 1)"]

CMD ["evigate", "serve", "--listen", "0.0.0.0:50051"]
