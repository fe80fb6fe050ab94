#!/usr/bin/env bash
# Worker: a Celery worker (sync, allocation, admission, eviction, publish).
# CELERY_QUEUES limits it to some queues (e.g. "sync" for a sync-only worker).
# Extra arguments go to `celery worker`.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$HERE/common.sh"

require_secret_key
python "$HERE/prestart.py" wait
# Touched at every worker heartbeat (apps/common/worker_health.py); the
# Deployment's liveness probe restarts a worker whose heartbeats stopped.
export WORKER_ALIVE_FILE="${WORKER_ALIVE_FILE:-/tmp/vnpu-worker-alive}"
args=(
  -A vnpuportal worker
  --loglevel "${LOG_LEVEL:-INFO}"
  --pool "${CELERY_POOL:-prefork}"
  --concurrency "${CELERY_CONCURRENCY:-4}"
  --hostname "${CELERY_HOSTNAME:-worker@%h}"
  -O fair
  --without-gossip
  --without-mingle
)
if [ -n "${CELERY_QUEUES:-}" ]; then
  args+=(--queues "$CELERY_QUEUES")
fi
exec celery "${args[@]}" "$@"
