#!/usr/bin/env bash
# The web UI's build for scripts/run.sh, scripts/test.sh and CI.
#
#   bash frontend/build.sh           build frontend/dist if it is missing or older than
#                                    its sources; without npm, warn and go on (the API
#                                    still works, / says how to build the UI)
#   bash frontend/build.sh --check   also type-check, check the translations
#                                    (scripts/i18n-check.mjs) and run the unit tests (Vitest);
#                                    npm is required
#   bash frontend/build.sh --checks-only
#                                    those checks without the build (scripts/test.sh runs
#                                    them beside pytest, once the build is done)
#
# Dependencies are (re)installed with `npm ci` when node_modules is missing or
# older than package-lock.json.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
check=0
build=1
case "${1:-}" in
  --check) check=1 ;;
  --checks-only) check=1 build=0 ;;
esac

stale() {
  [ ! -f dist/index.html ] ||
    [ -n "$(find src public index.html package.json package-lock.json vite.config.ts tsconfig.json \
      -newer dist/index.html -print -quit 2>/dev/null)" ]
}

if ! command -v npm >/dev/null 2>&1; then
  msg="npm not found: cannot build the web UI (install Node 20+ and npm; see frontend/README.md)"
  if [ "$check" = 1 ]; then echo "$msg" >&2; exit 1; fi
  if stale; then echo "warning: $msg" >&2; fi
  exit 0
fi
if [ "$check" = 0 ] && ! stale; then exit 0; fi

if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "==> npm ci (frontend/)"
  npm ci --no-audit --no-fund --loglevel=error
fi
if [ "$check" = 1 ]; then
  echo "==> frontend: tsc --noEmit"
  npm run --silent lint
  echo "==> frontend: the catalogs (English and Chinese) and no text outside them"
  node scripts/i18n-check.mjs
  echo "==> frontend: vitest"
  npm test --silent
fi
if [ "$build" = 1 ] && stale; then
  echo "==> frontend: vite build"
  npm run --silent build
fi
