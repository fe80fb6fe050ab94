#!/usr/bin/env bash
# The whole test suite: lint, migrations, OpenAPI schema, the frontend, the real
# control plane's build (Go), then pytest.
# Uses DATABASE_URL / REDIS_URL when set (CI points them at PostgreSQL and Redis);
# .ci/run installs and starts those first (scripts/services.sh).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/_venv.sh" test
export DJANGO_SETTINGS_MODULE=vnpuportal.settings.test

echo "==> ruff check"
ruff check .
echo "==> makemigrations --check"
python manage.py makemigrations --check --dry-run
echo "==> OpenAPI schema"
python manage.py spectacular --validate --fail-on-warn --file /dev/null
echo "==> frontend (tsc, vitest, vite build)"
bash frontend/build.sh --check
echo "==> the real control plane and helm (Go builds, cached by version; cold: minutes)"
python -m kubestack build
# kubectl of the same version as the API server, and helm, for the tests that run them.
export PATH="$(python -m kubestack bin):$PATH"
echo "==> pytest (database: ${DATABASE_URL:-sqlite})"
python -m pytest "$@"
