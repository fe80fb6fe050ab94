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
