#!/usr/bin/env bash
# The image's entrypoint. First argument: what this container is.
#   web (default)   the ASGI app under uvicorn (entrypoint-web.sh)
#   worker          a Celery worker (entrypoint-worker.sh)
#   beat            the Celery beat scheduler; run exactly one (entrypoint-beat.sh)
#   simcluster      the simulated cluster of the demo (entrypoint-simcluster.sh)
#   manage ARGS     python manage.py ARGS (e.g. `manage createsuperuser`)
#   anything else   run as given (e.g. `bash`)
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
role="${1:-web}"
[ "$#" -gt 0 ] && shift
case "$role" in
  web | worker | beat | simcluster) exec "$HERE/entrypoint-$role.sh" "$@" ;;
  manage) exec python manage.py "$@" ;;
  *) exec "$role" "$@" ;;
esac
