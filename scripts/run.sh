#!/usr/bin/env bash
# Run the portal on its embedded default: SQLite, no Redis, the reference guide's
# device config imported as the demo cluster. Open http://127.0.0.1:8000/
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/_venv.sh" run

# A local secret key, made once; production sets DJANGO_SECRET_KEY itself.
if [ ! -f .env ]; then
  echo "DJANGO_SECRET_KEY=$(python -c 'import secrets; print(secrets.token_urlsafe(48))')" > .env
  echo "DJANGO_DEBUG=true" >> .env
fi
export DJANGO_SETTINGS_MODULE=vnpuportal.settings.base
PORT="${PORT:-8000}"

python manage.py migrate --noinput
python manage.py demo
echo "==> portal on http://127.0.0.1:${PORT}/  (admin login: admin / admin; API docs: /api/docs/)"
exec uvicorn vnpuportal.asgi:application --host 127.0.0.1 --port "$PORT"
