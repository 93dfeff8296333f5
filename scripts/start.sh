#!/usr/bin/env bash
# `npm start`: fetch the built-in model once, where this server will look for it, then serve. npm hands the flags after
# `--` to this script only (a prestart script never sees them), so --config and --data-dir are passed on to the fetch.
set -euo pipefail
bin="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/bin/switchboard"

where=()
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  case "${args[i]}" in
    --config | --data-dir) where+=("${args[i]}" "${args[i + 1]-}") ;;
    --config=* | --data-dir=*) where+=("${args[i]}") ;;
  esac
done

"$bin" models fetch --best-effort --if-needed --timeout 15 --retries 1 ${where[@]+"${where[@]}"}
exec "$bin" serve "$@"
