#!/usr/bin/env bash
# Web: the ASGI application (HTTP and WebSockets) under uvicorn, once the
# database answers and is migrated. Extra arguments go to uvicorn.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$HERE/common.sh"

require_secret_key
python "$HERE/prestart.py" wait
# Several replicas may start at once: prestart.py migrates under a PostgreSQL
# advisory lock. MIGRATE_ON_START=false when a Job or an operator migrates.
if truthy "${MIGRATE_ON_START:-true}"; then
  python "$HERE/prestart.py" migrate
fi
# One uvicorn process per CPU by default: Django runs a process's sync views one
# at a time, so processes, not threads, use the pod's cores. Without a CPU
# limit, at most WEB_CONCURRENCY_MAX (4).
workers="${WEB_CONCURRENCY:-auto}"
if [ "$workers" = auto ]; then
  workers="$(cpu_count "${CGROUP_CPU_MAX_FILE:-/sys/fs/cgroup/cpu.max}" "${WEB_CONCURRENCY_MAX:-4}")"
fi
case "$workers" in
  '' | *[!0-9]* | 0)
    echo "vnpuportal: WEB_CONCURRENCY must be a positive number or auto, not '$workers'." >&2
    exit 78
    ;;
esac
# Each process keeps a few PostgreSQL connections open (docs/configuration.md).
export DATABASE_POOL_MAX_SIZE="${DATABASE_POOL_MAX_SIZE:-4}"
if [ "$workers" -gt 1 ]; then
  # The HTTP histogram is summed over the worker processes through this directory.
  export PROMETHEUS_MULTIPROC_DIR="${PROMETHEUS_MULTIPROC_DIR:-/tmp/prometheus}"
  mkdir -p "$PROMETHEUS_MULTIPROC_DIR"
  find "$PROMETHEUS_MULTIPROC_DIR" -mindepth 1 -delete
fi
access_log=(--access-log)
truthy "${ACCESS_LOG:-true}" || access_log=(--no-access-log)
exec uvicorn vnpuportal.asgi:application \
  --host "${HOST:-0.0.0.0}" \
  --port "${PORT:-8000}" \
  --workers "$workers" \
  --proxy-headers \
  --forwarded-allow-ips "${FORWARDED_ALLOW_IPS:-127.0.0.1}" \
  --no-server-header \
  --timeout-graceful-shutdown "${GRACEFUL_SHUTDOWN_SECONDS:-20}" \
  "${access_log[@]}" \
  "$@"
