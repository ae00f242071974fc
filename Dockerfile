# syntax=docker/dockerfile:1
# gateway-ingest: the long-running service (`start`) and every other CLI command.
#   docker build -t gateway-ingest .
#   docker run --rm gateway-ingest --help

ARG NODE_IMAGE=node:22-bookworm-slim

# ---- build: bundle the CLI with esbuild, compile the emulator (needs the dev dependencies) -------
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/emulator/package.json ./packages/emulator/
# `prepare` would build before the sources are here; the build runs explicitly below.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.base.json tsconfig.json ./
COPY packages/emulator/tsconfig.json ./packages/emulator/
COPY packages/emulator/src ./packages/emulator/src
COPY scripts ./scripts
COPY src ./src
RUN npm run build

# ---- deps: production dependencies only (none needs an install script; the emulator, a dev ----
# dependency, is left out)
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/emulator/package.json ./packages/emulator/
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force

# ---- runtime: no compiler, no dev dependencies, no emulator, not root --------------------------
FROM ${NODE_IMAGE} AS runtime
# A worker keeps 35 to 40 MB live; without limits V8 lets garbage grow the heap past 200 MB before
# collecting it on a large host. These keep a worker under 150 MB (BENCHMARKS.md) at about 5% more CPU.
# Override with `-e NODE_OPTIONS=...`; never below 96 MB of old space (it thrashes). glibc gives each
# thread that allocates (libuv's pool, V8's collector threads) an arena of its own, and raises the size
# it maps blocks from each time a large one is freed, after which buffers of answers are carved from
# the heap and their space stays resident: two arenas and a fixed 64 KiB threshold keep about 10 MB
# of free native memory from staying resident (BENCHMARKS.md "Fifty years").
ENV NODE_ENV=production \
    HTTP_PORT=9464 \
    NODE_OPTIONS="--max-semi-space-size=4 --max-old-space-size=128" \
    MALLOC_ARENA_MAX=2 \
    MALLOC_MMAP_THRESHOLD_=65536
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY bin ./bin
COPY migrations ./migrations
COPY jobs.yaml ./jobs.yaml
USER node
EXPOSE 9464
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.HTTP_PORT || 9464}/healthz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["node", "bin/gateway-ingest.js"]
CMD ["start", "--config", "/app/jobs.yaml"]

# ---- demo: the runtime plus the gateway emulator and its bundled catalogs ----------------------
#   docker build --target demo -t gateway-ingest:demo .   (the compose "demo" profile builds this)
FROM runtime AS demo
COPY --from=build /app/node_modules/csv-parse ./node_modules/csv-parse
COPY --from=build /app/packages/emulator/package.json ./packages/emulator/
COPY --from=build /app/packages/emulator/dist ./packages/emulator/dist
COPY packages/emulator/data ./packages/emulator/data
USER root
RUN mkdir -p node_modules/@gateway-ingest && ln -s ../../packages/emulator node_modules/@gateway-ingest/emulator
USER node

# ---- the default target: the production image ---------------------------------------------------
FROM runtime AS production
