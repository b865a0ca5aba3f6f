#!/usr/bin/env bash
# The one test command: installs (via bootstrap), then builds, typechecks, lints and tests every
# package, and ends with the line `N passed, M failed`. Exits non-zero when anything failed or
# when no test ran.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/bootstrap.sh || { echo "bootstrap failed"; echo "0 passed, 1 failed"; exit 1; }
export PATH="$root/.tools/node_modules/.bin:$PATH"
export TURBO_TELEMETRY_DISABLED=1
rm -f packages/*/test-results.json apps/*/test-results.json
pnpm exec prettier --check . --log-level warn
format_status=$?
pnpm exec turbo run typecheck lint test --continue
tasks_status=$?
[ "$format_status" -eq 0 ] || echo "formatting: run 'pnpm format' (prettier) and commit the result"
tasks_status=$(( tasks_status | format_status ))
node scripts/sum-test-results.mjs
sum_status=$?
if [ "$tasks_status" -ne 0 ] || [ "$sum_status" -ne 0 ]; then exit 1; fi
