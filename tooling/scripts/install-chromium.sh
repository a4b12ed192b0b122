#!/bin/sh
# Installs Debian's `chromium` for the console's browser tests (apps/sync-server/test/console),
# unless a Chromium is already on the PATH. Needs root (as in CI) and apt-get; prints the
# browser's path on its last line. Exit status non-zero when no browser could be had.
set -eu

find_browser() {
  for name in chromium chromium-browser; do
    if command -v "$name" >/dev/null 2>&1; then command -v "$name"; return 0; fi
  done
  return 1
}

if path=$(find_browser); then echo "$path"; exit 0; fi

command -v apt-get >/dev/null 2>&1 || { echo "install-chromium: no chromium on the PATH and no apt-get to install it" >&2; exit 1; }
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO=sudo; else
    echo "install-chromium: installing chromium needs root: run 'apt-get install -y chromium' as root" >&2; exit 1
  fi
else
  SUDO=
fi
echo "install-chromium: installing Debian's chromium (apt-get)" >&2
export DEBIAN_FRONTEND=noninteractive
# Another apt run (a parallel job) may hold the lock: wait for it rather than fail.
$SUDO apt-get -o DPkg::Lock::Timeout=300 update -qq >&2
$SUDO apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends chromium >&2
find_browser
