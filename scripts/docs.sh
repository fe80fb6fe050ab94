#!/usr/bin/env bash
# The documentation site (docs/, Sphinx with MyST Markdown) into var/docs/html,
# in strict mode: nitpicky, and every warning an error, so a link to a page or
# heading that does not exist, or a repository path that names no file, fails.
# Run by scripts/test.sh; on its own: `bash scripts/docs.sh` after
# `source scripts/_venv.sh test`. -E: read every page again each time, so
# nothing is passed because an unchanged page was not re-read.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
rm -rf var/docs
exec python -m sphinx -W --keep-going -n -E -q -b html -d var/docs/doctrees docs var/docs/html "$@"
