#!/bin/sh
# Installs Debian's `postgresql-15` (server binaries in /usr/lib/postgresql/15/bin) for the
# PostgreSQL suites, unless they are there already. Needs root (as in CI) and apt-get; prints the
# binaries' folder on its last line. Exit status non-zero when no server could be had.
set -eu

BIN=/usr/lib/postgresql/15/bin
if [ -x "$BIN/postgres" ] && [ -x "$BIN/initdb" ]; then echo "$BIN"; exit 0; fi

command -v apt-get >/dev/null 2>&1 || { echo "install-postgres: no $BIN/postgres and no apt-get to install it" >&2; exit 1; }
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO=sudo; else
    echo "install-postgres: installing postgresql-15 needs root: run 'apt-get install -y postgresql-15' as root" >&2; exit 1
  fi
else
  SUDO=
fi
echo "install-postgres: installing Debian's postgresql-15 (apt-get)" >&2
export DEBIAN_FRONTEND=noninteractive
# Another apt run (a parallel job) may hold the lock: wait for it rather than fail.
$SUDO apt-get -o DPkg::Lock::Timeout=300 update -qq >&2
$SUDO apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends postgresql-15 >&2
[ -x "$BIN/postgres" ] || { echo "install-postgres: postgresql-15 installed but $BIN/postgres is missing" >&2; exit 1; }
echo "$BIN"
