#!/usr/bin/env bash
# Runs the whole test suite against real redis-server processes that the tests
# start themselves on loopback. Installs what is missing first (Debian/Ubuntu):
# redis-server, and gcc, which `go test -race` needs for cgo and the safety
# suite for its clock shim (servers whose clocks run fast or jump).
#
#   ./test.sh              install what is missing, run every test with -race
#   ./test.sh -run Redis   extra arguments go to `go test`
#   ./test.sh --install    only install what is missing
set -euo pipefail
cd "$(dirname "$0")"

missing=()
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
command -v redis-cli >/dev/null 2>&1 || missing+=(redis-tools)
command -v gcc >/dev/null 2>&1 || missing+=(gcc)
if ((${#missing[@]})); then
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo="sudo"
	echo "test.sh: installing ${missing[*]}" >&2
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

[ "${1:-}" = "--install" ] && exit 0

CGO_ENABLED=1 exec go test -race -count=1 -timeout 20m "$@" ./...
