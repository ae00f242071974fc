#!/usr/bin/env bash
# Production-shaped smoke test: what the Docker image runs, without Docker. A fresh clone installed
# with `npm ci --omit=dev` (no dev dependency, no emulator; `prepare` compiles dist/), then
# `migrate`, `start` under the image's NODE_OPTIONS, a backfill through a gateway emulator installed
# separately from its packed package, /readyz and /metrics, and SIGTERM: the service must exit 0.
# Needs PostgreSQL and Redis (TEST_DATABASE_URL, TEST_REDIS_URL as for `npm test`).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

step() { printf '  smoke: %s\n' "$*"; }
fail() {
  printf '  smoke FAILED: %s\n' "$*" >&2
  for f in "$work"/*.log; do [ -f "$f" ] && { echo "--- $f" >&2; tail -n 30 "$f" >&2; }; done
  exit 1
}
# Polls a command until it succeeds, for at most $1 seconds.
within() {
  local seconds=$1; shift
  local end=$((SECONDS + seconds))
  until "$@" >/dev/null 2>&1; do
    [ "$SECONDS" -lt "$end" ] || return 1
    sleep 0.2
  done
}
free_port() { node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }

db_base=${TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres}
redis_url=${TEST_REDIS_URL:-redis://127.0.0.1:6379}
run_id=$(node -p 'require("crypto").randomBytes(4).toString("hex")')
key="smoke-key-$(node -p 'require("crypto").randomBytes(12).toString("hex")')"

step "fresh clone, npm ci --omit=dev"
# The emulator is packed from this checkout: its build must be there.
[ -f "$root/packages/emulator/dist/index.js" ] || (cd "$root" && npm run build --silent)
git clone -q "$root" "$work/app"
(cd "$work/app" && npm ci --omit=dev --no-audit --no-fund --prefer-offline --loglevel=error) >"$work/install.log" 2>&1 || fail "npm ci --omit=dev"
for dev in vitest tsx @gateway-ingest/emulator csv-parse; do
  [ ! -e "$work/app/node_modules/$dev" ] || fail "the production install holds the dev dependency $dev"
done
cd "$work/app"
node bin/gateway-ingest.js --help >/dev/null || fail "--help"

step "the emulator command says the emulator is not installed (exit 2)"
set +e
node bin/gateway-ingest.js emulator --port 0 >/dev/null 2>"$work/emulator-missing.log"
rc=$?
set -e
[ "$rc" = 2 ] && grep -q "not installed" "$work/emulator-missing.log" || fail "emulator without the package: exit $rc"

step "the emulator, packed and installed on its own"
(cd "$root/packages/emulator" && npm pack --silent --pack-destination "$work" >/dev/null)
mkdir "$work/emu"
(cd "$work/emu" && npm init -y >/dev/null && npm install --no-audit --no-fund --prefer-offline --loglevel=error "$work"/gateway-ingest-emulator-*.tgz) \
  >"$work/emu-install.log" 2>&1 || fail "installing the packed emulator"
MARKET_KEY=$key node "$work/emu/node_modules/@gateway-ingest/emulator/bin/gateway-emulator.js" --port 0 \
  >"$work/emulator.log" 2>&1 &
pids+=($!)
within 30 grep -q "listening on" "$work/emulator.log" || fail "the emulator did not start"
gateway=$(sed -n 's/.*listening on \(http[^ ]*\).*/\1/p' "$work/emulator.log" | head -1)

port=$(free_port)
export DATABASE_URL="${db_base%/*}/gi_smoke_$run_id" REDIS_URL="$redis_url" QUEUE_PREFIX="smoke-$run_id"
export GATEWAY_BASE_URL=$gateway MARKET_KEY=$key HTTP_PORT=$port NODE_ENV=production LOG_LEVEL=info
export WORKER_CONCURRENCY=4 SHUTDOWN_DEADLINE_MS=15000
# As the Dockerfile sets it.
export NODE_OPTIONS="--max-semi-space-size=4 --max-old-space-size=128" MALLOC_ARENA_MAX=2 MALLOC_MMAP_THRESHOLD_=65536
drop_db() { psql "$db_base" -qc "drop database if exists gi_smoke_$run_id" >/dev/null 2>&1 || true; }
trap 'drop_db; cleanup' EXIT

step "migrate"
node bin/gateway-ingest.js migrate >"$work/migrate.log" 2>&1 || fail "migrate"

step "start"
cat >"$work/jobs.yaml" <<'YAML'
earthquakes:
  - name: smoke-recent
    min_magnitude: 4
    every: 1h
    lookback: 1d
YAML
node bin/gateway-ingest.js start --config "$work/jobs.yaml" >"$work/start.log" 2>&1 &
service=$!
pids+=("$service")
within 60 curl -fsS --max-time 2 "http://127.0.0.1:$port/readyz" || fail "/readyz did not answer 200 within 60 s"

step "a backfill, run by the service's workers"
timeout 300 node bin/gateway-ingest.js backfill earthquakes --from 2025-08-19T00:00:00Z --to 2025-09-18T00:00:00Z --wait \
  >"$work/backfill.log" 2>&1 || fail "backfill --wait"
stored=$(psql "$DATABASE_URL" -tAc "select count(*) from earthquake_events")
[ "$stored" -gt 1000 ] || fail "only $stored events stored"

step "/metrics"
curl -fsS --max-time 5 "http://127.0.0.1:$port/metrics" >"$work/metrics.txt" || fail "/metrics"
grep -q '^gateway_ingest_gateway_billed_calls_total' "$work/metrics.txt" || fail "/metrics lacks the billed calls counter"

step "SIGTERM"
kill -TERM "$service"
set +e
timeout 30 tail --pid="$service" -f /dev/null
wait "$service"
rc=$?
set -e
[ "$rc" = 0 ] || fail "start exited $rc after SIGTERM"

! grep -rqF "$key" "$work"/*.log "$work/metrics.txt" || fail "the key appears in the service's output"
step "passed ($stored events)"
