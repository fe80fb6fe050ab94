#!/usr/bin/env bash
# The whole test suite: the Go builds in the background (kubectl, the real
# control plane, helm), lint, the web UI's build, then pytest, with the other
# checks beside it (migrations, OpenAPI schema, the documentation site, the
# files shared with the frontend, the frontend's own checks).
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
# Each step says when it started (seconds since the start): where the minutes go.
step() { printf '==> [%4ds] %s\n' "$SECONDS" "$*"; }
export DJANGO_SETTINGS_MODULE=vnpuportal.settings.test
FAST_LANE="not browser and not realstack and not faults and not slow and not processes and not postgres and not redis and not prometheus and not tools and not helm and not oidc"

if [ "${1:-}" != "--fast" ]; then
  # The Go builds (kubectl, the real control plane, HAMi's scheduler, helm;
  # cached by version, so a warm run finds them at once) start first and run
  # beside everything else, niced so that the checks and tests come first. A
  # test that runs kubectl or helm waits for its stage (the shims below); the
  # real-stack tests wait for the control plane, and those of HAMi's
  # scheduler for it too (kubestack.build.wait_for_background_build), and
  # run last, the Helm tests after them. A cold build used to hold the
  # first real-stack test, and with it every test after it, for twenty minutes.
  export KUBESTACK_BUILD_DIR="$PWD/var/kubestack-build"
  rm -rf "$KUBESTACK_BUILD_DIR"
  mkdir -p "$KUBESTACK_BUILD_DIR"
  # HAMi's scheduler is built from the Go module when the proxy serves it,
  # else from the release source named by HAMI_SRC (docs/kubestack.md);
  # without either only its stage (and the tests of --scheduler hami) fail.
  step "Go builds (kubectl, hydra, the control plane, HAMi's scheduler, helm) in the background: $KUBESTACK_BUILD_DIR/build.log"
  (
    nice -n 10 env -u KUBESTACK_BUILD_DIR python -m kubestack build \
      --status-dir "$KUBESTACK_BUILD_DIR" >"$KUBESTACK_BUILD_DIR/build.log" 2>&1 || true
  ) &
  build_pid=$!
fi

# The translations Django reads (locale/*/LC_MESSAGES/django.mo) are build
# output, compiled in Python (Babel): both lanes' tests answer in Chinese.
step "translations (locale/*.po -> .mo)"
python manage.py compile_locale
step "ruff check"
ruff check .
step "mypy (the typed domain code: pyproject.toml [tool.mypy] files)"
mypy
if [ "${1:-}" = "--fast" ]; then
  shift
  step "pytest, the fast lane (-m \"$FAST_LANE\")"
  exec env -u DATABASE_URL -u REDIS_URL python -m pytest -q -m "$FAST_LANE" "$@"
fi
# The web UI's build first: the browser tests serve it.
step "frontend build (npm ci, vite build)"
bash frontend/build.sh
# The checks that pytest does not need run beside it (much of the suite waits
# on processes and sockets, not the CPU): their output goes to
# var/checks.log, each failure is named at the end and fails the run.
checks_log="$PWD/var/checks.log"
mkdir -p "$(dirname "$checks_log")"
run_checks() {
  set +e
  local failed=()
  check() {
    local name=$1
    shift
    printf '==> [%4ds] %s\n' "$SECONDS" "$name"
    "$@" || failed+=("$name")
  }
  check "makemigrations --check" python manage.py makemigrations --check --dry-run
  check "OpenAPI schema" python manage.py spectacular --validate --fail-on-warn --file /dev/null
  check "docs (Sphinx, strict: a broken link or a missing file fails; var/docs/html)" bash scripts/docs.sh
  check "error codes shared with the frontend (frontend/src/api/errorCodes.ts)" python manage.py error_codes --check
  check "translations complete (every message of the code translated, none fuzzy, .mo current)" python manage.py compile_locale --check
  check "the live contract shared with the frontend (frontend/src/live/contract.ts)" python manage.py live_contract --check
  check "the alert rules (deploy/prometheus/vnpu-alerts.rules.yml, the chart's prometheusrule.yaml)" python manage.py alert_rules --check
  check "the REST API's TypeScript types, from the OpenAPI schema (frontend/src/api/schema.d.ts)" bash frontend/scripts/gen-api-types.sh --check
  check "frontend checks (tsc, the translation catalogs, vitest)" bash frontend/build.sh --checks-only
  printf '==> [%4ds] checks done\n' "$SECONDS"
  for name in "${failed[@]}"; do echo "FAILED: $name"; done
  [ "${#failed[@]}" = 0 ]
}
step "the other checks, beside pytest: $checks_log"
# Niced, as the Go builds are: the tests come first.
(
  renice -n 10 -p "$BASHPID" >/dev/null || true
  run_checks
) >"$checks_log" 2>&1 &
checks_pid=$!
# Should this script stop early, the checks stop with it.
trap 'kill "$checks_pid" 2>/dev/null || true' EXIT
# kubectl of the same version as the API server, helm, and the control plane.
tool_path="$(python -m kubestack bin --planned)"
# Until the background build has made them, kubectl and helm on PATH are
# shims that wait for their stage and then run the real one: pytest starts
# at once, and only a test that runs one of them waits (cold: a few minutes).
shims="$KUBESTACK_BUILD_DIR/shims"
mkdir -p "$shims"
IFS=: read -r kubectl_dir helm_dir _ <<<"$tool_path"
for tool in kubectl helm; do
  if [ "$tool" = kubectl ]; then real="$kubectl_dir/kubectl"; else real="$helm_dir/helm"; fi
  cat >"$shims/$tool" <<SHIM
#!/bin/sh
# $tool from scripts/test.sh's background build, once its stage has ended.
while [ ! -s "$KUBESTACK_BUILD_DIR/$tool.rc" ]; do sleep 1; done
if [ "\$(cat "$KUBESTACK_BUILD_DIR/$tool.rc")" != 0 ]; then
  echo "the background build of $tool failed: $KUBESTACK_BUILD_DIR/build.log" >&2
  exit 1
fi
exec "$real" "\$@"
SHIM
  chmod +x "$shims/$tool"
done
export PATH="$shims:$tool_path:$PATH"
# Several workers (pytest-xdist): much of the suite waits on processes,
# sockets and sync loops rather than the CPU. Each worker takes whole
# modules, and the browser tests whole, so that module and package fixtures
# (HAMi's scheduler, the browser's portal) start once (tests/xdist_scopes.py),
# in the order tests/conftest.py gives them.
workers="${PYTEST_WORKERS:-3}"
step "pytest on $workers workers (database: ${DATABASE_URL:-sqlite})"
status=0
# The slowest tests are named at the end: where the suite's minutes go.
python -m pytest -n "$workers" --dist loadscope --no-loadscope-reorder --durations=20 "$@" || status=$?
if wait "$checks_pid"; then
  grep -E "^==> " "$checks_log"
else
  echo "the checks beside pytest failed; their log ($checks_log):" >&2
  cat "$checks_log" >&2
  status=1
fi
wait "$build_pid" || true
for stage in kubectl hydra control-plane hami helm; do
  if [ "$(cat "$KUBESTACK_BUILD_DIR/$stage.rc" 2>/dev/null)" != "0" ]; then
    echo "the background build of $stage failed; the end of $KUBESTACK_BUILD_DIR/build.log:" >&2
    tail -40 "$KUBESTACK_BUILD_DIR/build.log" >&2 || true
    status=1
    break
  fi
done
grep -E "^==> (.* built in|ready)" "$KUBESTACK_BUILD_DIR/build.log" || true
step "done (exit status $status)"
exit "$status"
