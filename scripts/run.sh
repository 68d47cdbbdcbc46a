#!/usr/bin/env bash
# Sets up (scripts/setup.sh), then runs the main job: `python -m tessel`, which parses every kernel in
# examples/, prints it back in canonical form, and prints a few answers of the IR helpers.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/scripts/setup.sh"
exec "$ROOT/.venv/bin/python" -m tessel "$@"
