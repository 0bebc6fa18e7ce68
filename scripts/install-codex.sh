#!/usr/bin/env bash
# Installs the Codex CLI from the npm registry into a cache folder, once, and prints the path
# of its `codex` executable. Used by the peer benchmark (`npm run bench:peers`) and by the
# tests that drive Codex as an external agent. Idempotent: a second run only prints the path.
#   OPENVAALA_CODEX_VERSION  version to install (default below)
#   OPENVAALA_CACHE_DIR      cache folder (default: $XDG_CACHE_HOME/openvaala or ~/.cache/openvaala)
set -euo pipefail

version="${OPENVAALA_CODEX_VERSION:-0.171.0}"
cache="${OPENVAALA_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/openvaala}"
prefix="$cache/codex-$version"
binary="$prefix/node_modules/.bin/codex"

if [ ! -x "$binary" ]; then
  mkdir -p "$prefix"
  echo "install-codex: installing @openai/codex@$version into $prefix" >&2
  npm install --prefix "$prefix" --no-save --no-audit --no-fund --loglevel=error "@openai/codex@$version" >&2
fi
"$binary" --version >&2
echo "$binary"
