# Sourced by run.sh and test.sh: make .venv with Python >= 3.11 and install the
# project into it. Re-running is cheap: pip skips what is already satisfied.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PY="${PYTHON:-python3}"
if ! "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  echo "vNPU Portal needs Python 3.11 or newer (found: $("$PY" --version 2>&1)). Set PYTHON=/path/to/python3.11." >&2
  exit 1
fi
if [ ! -x .venv/bin/python ]; then
  echo "==> creating .venv"
  "$PY" -m venv .venv
fi
stamp=.venv/.installed-$(cat pyproject.toml | sha256sum | cut -c1-16)-${1:-run}
if [ ! -f "$stamp" ]; then
  echo "==> installing Python dependencies (pyproject.toml)"
  # uv installs the same pinned set as pip (compared package by package):
  # 21 s instead of 33 on a fresh clone, which every CI run waits for before
  # its first test. --compile-bytecode as pip does: without it every Python
  # process of the run imported its packages from source, 4x slower (1.5 s
  # against 0.35 s for Django, Celery and the kubernetes client), and a
  # fresh-clone run took 1,101 s instead of 938.
  .venv/bin/python -m pip install --quiet --disable-pip-version-check "uv==0.13.10"
  .venv/bin/uv pip install --quiet --compile-bytecode --python .venv/bin/python -e ".[test]"
  .venv/bin/python -m pip check
  touch "$stamp"
fi
export PATH="$ROOT/.venv/bin:$PATH"
