# syntax=docker/dockerfile:1
# cbwatch: Prometheus exporter for Couchbase Server, on Node.js 24 (the current LTS; Node 20 reached its end
# of life in April 2026). cbwatch itself still runs on Node >= 20.18.1 (what undici 7 needs).
#   docker build --build-arg REVISION=$(git rev-parse HEAD) -t cbwatch .
#   docker run -p 9420:9420 -v $PWD/cbwatch.yml:/etc/cbwatch/cbwatch.yml:ro \
#     -v $PWD/cb-password:/run/secrets/cb-password:ro cbwatch
# (the configuration names `password_file: /run/secrets/cb-password`; see README.md, "Docker").

ARG NODE_IMAGE=node:24-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
# Dev dependencies (tsc, esbuild) are needed to build; `npm run build` runs once the sources are in.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY scripts/build-info.mjs scripts/bundle.mjs ./scripts/
# No .git in the build context: the revision comes from the REVISION build argument (CBWATCH_REVISION below).
RUN npm run build \
 && npm prune --omit=dev --ignore-scripts --no-audit --no-fund

FROM ${NODE_IMAGE} AS runtime
ARG NODE_IMAGE
# The commit the image is built from: cbwatch_build_info{revision} reports it (CBWATCH_REVISION).
ARG REVISION=unknown
ARG VERSION=0.1.0
ARG CREATED=unknown
LABEL org.opencontainers.image.title="cbwatch" \
      org.opencontainers.image.description="Prometheus exporter and alerting kit for Couchbase Server" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.source="https://github.com/cbwatch/cbwatch" \
      org.opencontainers.image.documentation="https://github.com/cbwatch/cbwatch#readme" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}" \
      org.opencontainers.image.base.name="${NODE_IMAGE}"
# Every address of the container, port 9420: run's default anyway; it makes `cbwatch demo` (whose own default is
# the loopback only, out of reach of `-p`) listen where `docker run -p 9420:9420` reaches it. The HEALTHCHECK reads it too.
ENV NODE_ENV=production \
    CBWATCH_REVISION=${REVISION} \
    CBWATCH_WEB_LISTEN_ADDRESS=:9420
WORKDIR /opt/cbwatch
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist
COPY package.json ./
COPY bin ./bin
# The simulator behind `cbwatch demo` serves the captured Couchbase payloads; alerts and dashboards ship too.
COPY test/fixtures/couchbase ./test/fixtures/couchbase
COPY alerts ./alerts
COPY dashboards ./dashboards
# The node image already has an unprivileged `node` user (uid 1000).
USER node
EXPOSE 9420
# The probe is `cbwatch healthcheck`'s light entry point, dist/healthcheck.cjs: it loads Node's net (and, with a
# web config file, tls and the yaml package), never the daemon, so a probe every 30 s costs about what Node's own
# start does, a tenth of the CPU and about half the memory of the whole CLI (bench/RESULTS.md, "Docker
# HEALTHCHECK probe"). --jitless (V8's interpreter only): the same cost for plain HTTP, and a smaller peak when a
# web config file is read, measured there. It reads the same listen address and web config as `run`. Docker gives
# it the environment but not the CMD's flags: set the listen address and web config through
# CBWATCH_WEB_LISTEN_ADDRESS and CBWATCH_WEB_CONFIG_FILE (not flags) when they are not the defaults, and the check
# follows (TLS, basic auth, another port). Exit 0 healthy, 1 not.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "--jitless", "/opt/cbwatch/dist/healthcheck.cjs"]
# The entrypoint calls node itself, with the launcher's V8 flags and malloc setting (see bin/cbwatch.js).
ENV MALLOC_MMAP_THRESHOLD_=131072
# --disable-sigusr1 (Node 22.14 and later): SIGUSR1 does not open the Node inspector.
ENTRYPOINT ["node", "--max-semi-space-size=1", "--expose-gc", "--v8-pool-size=2", "--disable-sigusr1", "/opt/cbwatch/bin/cbwatch.js"]
CMD ["run", "--config", "/etc/cbwatch/cbwatch.yml"]
