#!/usr/bin/env bash
# Runs the end-to-end suite against the newest @openai/codex on npm (CI runs the pinned
# tests/e2e/CODEX_VERSION): for maintainers, to see a new Codex release break something
# before users do. Run it from a checkout with memcite installed in .venv:
#   bash tests/e2e/run_newest.sh [pytest options]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
codex=$(bash "$root/tests/e2e/install_codex.sh" latest)
echo "newest Codex: $("$codex" --version) ($codex); pinned: $(cat "$root/tests/e2e/CODEX_VERSION")"
cd "$root"
MEMCITE_CODEX_BIN="$codex" "${PYTHON:-.venv/bin/python}" -m pytest -q tests/e2e "$@"
