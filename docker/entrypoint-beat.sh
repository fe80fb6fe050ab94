#!/usr/bin/env bash
# Beat: the periodic jobs of CELERY_BEAT_SCHEDULE. Run exactly one (its
# Deployment has one replica and the Recreate strategy). Its schedule file is
# scratch: losing it only means every job runs once at start.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$HERE/common.sh"

require_secret_key
python "$HERE/prestart.py" wait
exec celery -A vnpuportal beat \
  --loglevel "${LOG_LEVEL:-INFO}" \
  --schedule "${CELERY_BEAT_SCHEDULE_FILE:-/tmp/celerybeat-schedule}" \
  --pidfile= \
  "$@"
