#!/usr/bin/env bash
# Runs every module's tests (the root module, pgstore, etcdstore and the
# examples that are modules of their own) against real servers that the
# tests start themselves on loopback: redis-server, PostgreSQL and etcd.
# Installs what is missing first (Debian/Ubuntu): redis-server, postgresql,
# etcd-server, and gcc, which `go test -race` needs for cgo and the safety
# suite for its clock shim (servers whose clocks run fast or jump).
#
#   ./test.sh              install what is missing, run every test with -race
#   ./test.sh -run Redis   extra arguments go to `go test`, in every module
#   ./test.sh --install    only install what is missing
set -euo pipefail
cd "$(dirname "$0")"

missing=()
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
command -v redis-cli >/dev/null 2>&1 || missing+=(redis-tools)
command -v gcc >/dev/null 2>&1 || missing+=(gcc)
compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || missing+=(postgresql)
command -v etcd >/dev/null 2>&1 || missing+=(etcd-server)
command -v etcdctl >/dev/null 2>&1 || missing+=(etcd-client)
if ((${#missing[@]})); then
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo="sudo"
	echo "test.sh: installing ${missing[*]}" >&2
	$sudo apt-get update -qq
	# The postgresql package starts a cluster of its own; the tests start
	# theirs on free ports and never use it.
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

[ "${1:-}" = "--install" ] && exit 0

# Every directory with a go.mod is a module; each is tested on its own.
status=0
for mod in $(git ls-files '*go.mod' 2>/dev/null || find . -name go.mod -not -path './.git/*'); do
	dir=$(dirname "$mod")
	echo "== go test ./... in ${dir}" >&2
	(cd "$dir" && CGO_ENABLED=1 go test -race -count=1 -timeout 25m "$@" ./...) || status=1
done
exit $status
