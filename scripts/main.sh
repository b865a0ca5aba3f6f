#!/usr/bin/env bash
# The main job: install and build everything, then run the end-to-end demo — a scripted agent turn
# in a child process is killed with SIGKILL, recovered, planned and safely continued.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/bootstrap.sh
echo
exec node apps/cli/dist/bin.cjs demo "$@"
