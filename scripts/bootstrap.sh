#!/usr/bin/env bash
# Installs everything the project needs from the repo's own files: a pinned pnpm (local to the
# checkout, so nothing global is assumed), the workspace's dependencies from the lockfile, and a
# build. Safe to run again: each step is skipped or fast when already done.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

PNPM_VERSION=10.34.9
tools="$root/.tools"
if [ ! -x "$tools/node_modules/.bin/pnpm" ] || [ "$("$tools/node_modules/.bin/pnpm" --version 2>/dev/null)" != "$PNPM_VERSION" ]; then
  echo "› installing pnpm $PNPM_VERSION into .tools/"
  npm install --prefix "$tools" --no-audit --no-fund --loglevel=error "pnpm@$PNPM_VERSION" >/dev/null
fi
export PATH="$tools/node_modules/.bin:$PATH"

# node-gyp builds native addons against the local Node headers instead of downloading them.
node_prefix="$(dirname "$(dirname "$(command -v node)")")"
if [ -f "$node_prefix/include/node/node.h" ]; then export npm_config_nodedir="$node_prefix"; fi

# The TUI tests drive the real terminal UI through a pseudo-terminal with tmux (Debian's package).
if ! command -v tmux >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "› installing tmux (apt)"
    apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tmux >/dev/null
  else
    echo "! tmux is missing: install it (apt-get install tmux) to run the terminal UI tests" >&2
  fi
fi

# The browser tests (`maka ui`, the desktop renderer) drive Debian's chromium with playwright-core.
if [ -z "${CHROMIUM_PATH:-}" ] && [ ! -x /usr/bin/chromium ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "› installing chromium (apt, about a minute)"
    apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "! chromium is missing: install it (apt-get install chromium) or set CHROMIUM_PATH to run the browser tests" >&2
  fi
fi

# The PostgreSQL store's tests and benchmarks start a scratch cluster with the server's own
# binaries (scripts/scratch-postgres.mjs): Debian's postgresql package puts them in
# /usr/lib/postgresql/<version>/bin. The service itself is never started or enabled.
if [ -z "${MAKA_PG_BIN:-}" ] && ! compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "› installing postgresql (apt)"
    apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql >/dev/null
  else
    echo "! PostgreSQL is missing: install it (apt-get install postgresql) or set MAKA_PG_BIN to run the PostgreSQL store tests" >&2
  fi
fi

# Electron is a dev dependency for its types only: its binary is never downloaded (see apps/desktop).
export ELECTRON_SKIP_BINARY_DOWNLOAD=1
export TURBO_TELEMETRY_DISABLED=1
echo "› pnpm install --frozen-lockfile"
pnpm install --frozen-lockfile --reporter=silent
echo "› building packages"
pnpm exec turbo run build --output-logs=errors-only
