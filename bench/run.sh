#!/usr/bin/env bash
# npm run bench: installs the rig's tools (nginx, wrk from Debian) if missing, builds Switchboard, and runs
# bench/compare.mjs (Switchboard side by side with the floor and its peers). npm run bench:quick: under two minutes.
# bench/run.sh --messages [--rounds N]: /v1/messages forwarded to Anthropic vs chat forwarded to OpenAI, gateway CPU.
# bench/run.sh --responses [--rounds N] [--concurrency C] [--postgres ADMIN_URL] [--root DIR ...]: /v1/responses vs chat,
#   gateway CPU.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || missing+=(nginx-light)
command -v wrk >/dev/null 2>&1 || missing+=(wrk)
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing ${missing[*]} from Debian" >&2
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
fi
[ -d node_modules ] || npm install
npm run --silent build
ulimit -n 65536 2>/dev/null || true
if [ "${1:-}" = "--messages" ]; then
  shift
  exec node bench/messages-cpu.mjs "$@"
fi
if [ "${1:-}" = "--responses" ]; then
  shift
  exec node bench/responses-cpu.mjs "$@"
fi
exec node bench/compare.mjs "$@"
