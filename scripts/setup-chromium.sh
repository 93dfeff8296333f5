#!/usr/bin/env bash
# The console's end-to-end tests drive Debian's Chromium with playwright-core. This installs the `chromium` package
# when it is missing: from the distribution's archive only, never a browser downloaded from anywhere else.
set -euo pipefail
browser="${CHROMIUM_PATH:-/usr/bin/chromium}"
if [ -x "$browser" ]; then
  echo "chromium present: $browser"
  exit 0
fi
echo "installing chromium from Debian" >&2
sudo_cmd=""
[ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
$sudo_cmd apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq chromium >/dev/null
echo "chromium installed: $(command -v chromium)"
