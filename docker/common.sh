# shellcheck shell=bash
# Sourced by the entrypoints: shared checks. Not executable on its own.

# true/false as django-environ reads them (true, on, ok, y, yes, 1).
truthy() {
  case "$(printf '%s' "${1:-}" | tr '[:upper:]' '[:lower:]')" in
    true | on | ok | y | yes | 1) return 0 ;;
    *) return 1 ;;
  esac
}

# Production (DJANGO_DEBUG false) refuses to start without a secret key: say so
# here, in one line, before Django prints a traceback for it.
require_secret_key() {
  if truthy "${DJANGO_DEBUG:-false}"; then
    return 0
  fi
  if [ -z "$(printf '%s' "${DJANGO_SECRET_KEY:-}" | tr -d '[:space:]')" ]; then
    echo "vnpuportal: DJANGO_SECRET_KEY is not set; refusing to start." \
      "Production needs 50+ random characters (DJANGO_DEBUG=true is for a local demo only)." >&2
    exit 78 # EX_CONFIG
  fi
}

# The CPUs this container may use: its cgroup v2 quota (cpu.max "200000 100000"
# is 2), rounded up; without a quota the CPUs it may run on, at most $2 (a pod
# with no CPU limit on a 64-core node should not start 64 processes). The file
# is the first argument so that the tests can hand it one.
cpu_count() {
  local file="${1:-/sys/fs/cgroup/cpu.max}" most="${2:-4}" quota period cpus
  cpus="$(nproc 2>/dev/null || echo 1)"
  if read -r quota period 2>/dev/null <"$file" &&
    [ "$quota" != max ] && [ "${period:-0}" -gt 0 ]; then
    cpus=$(((quota + period - 1) / period))
  elif [ "$cpus" -gt "$most" ]; then
    cpus="$most"
  fi
  [ "$cpus" -ge 1 ] || cpus=1
  echo "$cpus"
}
