#!/bin/sh
# Runs one postmaster and makes it die with the Node process that started it.
#
# Usage (as the non-root user that owns DATA): run-postgres.sh BIN DATA PORT SOCKET_DIR
#
# src/Server.ts keeps a pipe on this script's stdin and never writes to it. When the Node
# process goes away, however it goes (exit, crash, SIGKILL), the kernel closes the pipe, `cat`
# below reads end-of-file, and the postmaster gets SIGINT (PostgreSQL's "fast" shutdown). A
# SIGTERM or SIGINT to this script does the same. Only the address, port and socket folder are
# set here: every other setting stays at PostgreSQL's default (fsync, synchronous_commit, ...).
set -u
BIN=$1 DATA=$2 PORT=$3 SOCKETS=$4

"$BIN/postgres" -D "$DATA" -p "$PORT" -c listen_addresses=127.0.0.1 -c unix_socket_directories="$SOCKETS" </dev/null &
pg=$!
stop() { kill -INT "$pg" 2>/dev/null; }
trap stop TERM INT HUP
# An asynchronous list's stdin is /dev/null unless redirected: hand it the pipe explicitly.
exec 3<&0
(cat <&3 >/dev/null; kill -INT "$pg" 2>/dev/null) &
watcher=$!
exec 3<&-
# `wait` returns early when a trapped signal arrives: wait until the postmaster is really gone.
while kill -0 "$pg" 2>/dev/null; do wait "$pg"; done
wait "$pg"; status=$?
kill "$watcher" 2>/dev/null
exit "$status"
