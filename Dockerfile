# syntax=docker/dockerfile:1
# cbwatch: Prometheus exporter for Couchbase Server.
#   docker build -t cbwatch .
#   docker run -p 9420:9420 -v $PWD/cbwatch.yml:/etc/cbwatch/cbwatch.yml:ro \
#     -e CB_PASSWORD=... cbwatch --config /etc/cbwatch/cbwatch.yml

FROM node:20-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
# Dev dependencies are needed to compile; `prepare` runs tsc once the sources are in.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npx tsc -p tsconfig.build.json \
 && npm prune --omit=dev --ignore-scripts --no-audit --no-fund

FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production
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
# Healthcheck with Node itself: the slim image has no curl or wget.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:9420/-/healthy').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# The entrypoint calls node itself, with no V8 flags, as the launcher does (see bin/cbwatch.js).
ENTRYPOINT ["node", "/opt/cbwatch/bin/cbwatch.js"]
CMD ["run", "--config", "/etc/cbwatch/cbwatch.yml"]
