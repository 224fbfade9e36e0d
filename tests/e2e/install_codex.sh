#!/usr/bin/env bash
# Installs the Codex CLI from npm into a cache folder outside the checkout and prints
# the path of its `codex` command. The version is tests/e2e/CODEX_VERSION (the pinned
# one) unless given: `install_codex.sh latest` takes the newest release on npm.
# The cache is $MEMCITE_E2E_CACHE, else $XDG_CACHE_HOME/memcite-e2e, else
# ~/.cache/memcite-e2e; an installed version is reused. Fails loudly (exit 1) when
# npm cannot install it: the end-to-end tests are never skipped for want of Codex.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
version=${1:-$(tr -d '[:space:]' < "$here/CODEX_VERSION")}
cache=${MEMCITE_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memcite-e2e}
if [ "$version" = latest ]; then
  version=$(npm view @openai/codex version)
fi
case "$version" in
  *[!0-9A-Za-z.+-]*|"") echo "install_codex.sh: not a version: '$version'" >&2; exit 2;;
esac
prefix="$cache/codex-$version"
codex="$prefix/node_modules/.bin/codex"
if [ ! -x "$codex" ] || ! "$codex" --version >/dev/null 2>&1; then
  mkdir -p "$cache"
  rm -rf "$prefix.partial"
  if ! npm install --silent --no-audit --no-fund --prefix "$prefix.partial" "@openai/codex@$version" >&2; then
    echo "install_codex.sh: npm could not install @openai/codex@$version" >&2
    exit 1
  fi
  rm -rf "$prefix"
  mv "$prefix.partial" "$prefix"
fi
got=$("$codex" --version)
case "$got" in
  *" $version") ;;
  *) echo "install_codex.sh: $codex reports '$got', not $version" >&2; exit 1;;
esac
echo "$codex"
