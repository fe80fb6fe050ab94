#!/usr/bin/env bash
# The whole test suite: lint, migrations, OpenAPI schema, the frontend, the real
# control plane's build (Go), then pytest.
# Uses DATABASE_URL / REDIS_URL when set (CI points them at PostgreSQL and Redis);
# .ci/run installs and starts those first (scripts/services.sh).
#
# --fast: the fast lane, run before every commit (lint, types, and every test
# that needs nothing but this Python: no browser, control plane, fault
# injection, services, subprocesses of the portal or Go-built tools), chosen by
# the markers tests/conftest.py sets (docs/testing.md). On SQLite, whatever
# DATABASE_URL and REDIS_URL say. Further arguments go to pytest.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/_venv.sh" test
export DJANGO_SETTINGS_MODULE=vnpuportal.settings.test
FAST_LANE="not browser and not realstack and not faults and not slow and not processes and not postgres and not redis and not prometheus and not tools"

echo "==> ruff check"
ruff check .
echo "==> mypy (the typed domain code: pyproject.toml [tool.mypy] files)"
mypy
if [ "${1:-}" = "--fast" ]; then
  shift
  echo "==> pytest, the fast lane (-m \"$FAST_LANE\")"
  exec env -u DATABASE_URL -u REDIS_URL python -m pytest -q -m "$FAST_LANE" "$@"
fi
echo "==> makemigrations --check"
python manage.py makemigrations --check --dry-run
echo "==> OpenAPI schema"
python manage.py spectacular --validate --fail-on-warn --file /dev/null
echo "==> error codes shared with the frontend (frontend/src/api/errorCodes.ts)"
python manage.py error_codes --check
echo "==> the live contract shared with the frontend (frontend/src/live/contract.ts)"
python manage.py live_contract --check
echo "==> the REST API's TypeScript types, from the OpenAPI schema (frontend/src/api/schema.d.ts)"
bash frontend/scripts/gen-api-types.sh --check
echo "==> frontend (tsc, vitest, vite build)"
bash frontend/build.sh --check
echo "==> kubectl and helm (Go builds, cached by version; cold: a few minutes)"
python -m kubestack build-tools
# The rest of the real control plane is built beside the tests (niced: the tests
# come first), and only the real-stack tests wait for
# it (kubestack.build.wait_for_background_build). Warm, it is there at once.
mkdir -p var
export KUBESTACK_BUILD_LOG="$PWD/var/kubestack-build.log" KUBESTACK_BUILD_RC="$PWD/var/kubestack-build.rc"
rm -f "$KUBESTACK_BUILD_RC"
echo "==> the real control plane (Go builds, cached by version), in the background: $KUBESTACK_BUILD_LOG"
(
  status=0
  nice -n 19 env -u KUBESTACK_BUILD_RC python -m kubestack build >"$KUBESTACK_BUILD_LOG" 2>&1 || status=$?
  echo "$status" >"$KUBESTACK_BUILD_RC"
) &
build_pid=$!
# kubectl of the same version as the API server, and helm, for the tests that run them.
tool_path="$(python -m kubestack bin --planned)"
export PATH="$tool_path:$PATH"
echo "==> pytest (database: ${DATABASE_URL:-sqlite})"
status=0
python -m pytest "$@" || status=$?
wait "$build_pid" || true
if [ "$(cat "$KUBESTACK_BUILD_RC" 2>/dev/null)" != "0" ]; then
  echo "the real control plane's build failed; the end of $KUBESTACK_BUILD_LOG:" >&2
  tail -40 "$KUBESTACK_BUILD_LOG" >&2 || true
  status=1
fi
grep -E "^==> (control plane built|ready)" "$KUBESTACK_BUILD_LOG" || true
exit "$status"
