#!/usr/bin/env bash
# Installs Claude Code (npm @anthropic-ai/claude-code, pinned) into a cache directory outside package.json, for the
# end-to-end test compat/claude-code.test.ts. Idempotent: an installed copy of the pinned version is kept. The
# package's own postinstall puts its native binary (shipped in @anthropic-ai/claude-code-linux-x64 from the same
# registry) in place of the placeholder; nothing is downloaded from anywhere else.
# Without CI a failed install only warns (the test then says how to install and skips); under CI=true it fails.
set -euo pipefail
cd "$(dirname "$0")/.."
version=2.1.328
directory=data/tools/claude-code
binary="$directory/node_modules/.bin/claude"
if [ -x "$binary" ] && "$binary" --version 2>/dev/null | grep -q "^$version "; then
  echo "claude-code $version present: $binary"
  exit 0
fi
mkdir -p "$directory"
# Its own package.json, so npm installs here and never touches the project's dependencies.
[ -f "$directory/package.json" ] || echo '{"private":true}' > "$directory/package.json"
if npm install --prefix "$directory" --no-audit --no-fund --no-save --loglevel=error \
  "@anthropic-ai/claude-code@$version" && "$binary" --version | grep -q "^$version "; then
  echo "claude-code $version installed: $binary"
  exit 0
fi
echo "claude-code $version could not be installed into $directory" >&2
if [ "${CI:-}" = "true" ]; then exit 1; fi
exit 0
