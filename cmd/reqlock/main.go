// Command reqlock answers operators' questions about reqlock's locks.
//
//	reqlock inspect [-prefix reqlock:] [-scope "POST /orders/{id}"] [-json] [-timeout 5s] [-cluster] KEY
//	reqlock inspect [flags] -part PART [-part PART ...]
//	reqlock forget [flags] KEY
//
// inspect prints whether KEY is held, by which instance (the Locker's
// WithHolder label), for how long still, its last fence, how many wait in
// line for it, and the key the store uses, which is what to look for in
// redis-cli. It only reads: the lock, its fence and its line stay as they
// are.
//
// forget clears the mark of KEY's last run (core.Locker.ForgetRun): an
// operator's word, after settling by hand a run in doubt (one that lost
// its lock without recording its outcome), that the key may run again
// instead of being refused (core.ErrInDoubt, 409 in_doubt). It takes the
// flags of inspect but -json.
//
// KEY is the raw key, as the application passes it to the Locker; with
// -scope, the raw key of an HTTP request, in that scope (httplock.LockKey).
// A key made with httplock.Join is given as its parts, in order, one -part
// each: the command joins them as Join does, each part as its length in
// bytes, a colon and the part (httplock.JoinKeys: user-42 and pay-1 are
// "7:user-425:pay-1").
// The store is the first of these environment variables that is set, as in
// examples/demo: DATABASE_URL, a PostgreSQL connection URL (pgstore);
// ETCD_ENDPOINTS, etcd's client URLs, comma-separated (etcdstore); REDIS_URL,
// redis://[user:password@]host:port/db or rediss:// for TLS (redisstore).
// Several URLs in REDIS_URL, separated by commas, are the nodes of a Redlock
// store; with -cluster, REDIS_URL names a Redis Cluster (extra nodes as
// ?addr=); with ?master_name=NAME it names Sentinels (extra ones as ?addr=).
// The output is the same on every store.
//
// The command is a module of its own, so that pgx and etcd's client reach
// only its build, never the build of a program that imports reqlock.
//
// Exit status: 0 when the store answered, 1 when it did not, 2 on a usage
// error.
package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/redis/go-redis/v9"
)

func main() {
	// The client would log each failed dial on its own; the error the
	// command prints says it once.
	redis.SetLogger(quietRedis{})
	os.Exit(run(os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

type quietRedis struct{}

func (quietRedis) Printf(context.Context, string, ...any) {}

// Exit statuses.
const (
	exitOK    = 0
	exitStore = 1
	exitUsage = 2
)

// run is the command with its surroundings passed in: arguments (without the
// program name), the environment, and where to write.
func run(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	switch args[0] {
	case "inspect":
		return inspect(args[1:], getenv, stdout, stderr)
	case "forget":
		return forget(args[1:], getenv, stdout, stderr)
	case "help", "-h", "-help", "--help":
		usage(stdout)
		return exitOK
	default:
		fmt.Fprintf(stderr, "reqlock: unknown command %q\n", args[0])
		usage(stderr)
		return exitUsage
	}
}

func usage(w io.Writer) {
	fmt.Fprint(w, `usage: reqlock inspect [flags] KEY
       reqlock forget [flags] KEY

inspect says who holds KEY, for how long, its last fence and how many
wait for it, reading only.

forget clears the mark of KEY's last run, after you settled by hand a run
in doubt (one that lost its lock without recording its outcome), so that
the key runs again instead of being refused (core.ErrInDoubt, 409
in_doubt).

`+storeHelp+`
Run "reqlock inspect -h" or "reqlock forget -h" for the flags.
`)
}
