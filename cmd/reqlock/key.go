package main

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
)

// keyFlags are the flags of every command that names a key, and the store
// it is in.
type keyFlags struct {
	prefix  *string
	scope   *string
	timeout *time.Duration
	cluster *bool
	parts   []string
}

// addKeyFlags defines the key's and the store's flags on fs.
func addKeyFlags(fs *flag.FlagSet) *keyFlags {
	k := &keyFlags{
		prefix:  fs.String("prefix", core.DefaultPrefix, "the Locker's key prefix (core.WithPrefix)"),
		scope:   fs.String("scope", "", `the HTTP scope of KEY, e.g. "POST /orders/{id}" (httplock.LockKey); empty: KEY is the Locker's key`),
		timeout: fs.Duration("timeout", 5*time.Second, "how long to wait for the store"),
		cluster: fs.Bool("cluster", false, "REDIS_URL names a Redis Cluster"),
	}
	fs.Func("part", "one part of a key made with httplock.Join, in order; repeat it for each part, instead of KEY", func(p string) error {
		k.parts = append(k.parts, p)
		return nil
	})
	return k
}

// key is the Locker's key that the parsed flags and the positional
// arguments name, or false after saying on stderr why there is none.
func (k *keyFlags) key(fs *flag.FlagSet, args []string, stderr io.Writer) (string, bool) {
	name := fs.Name()
	switch {
	case len(k.parts) > 0 && len(args) > 0:
		fmt.Fprintf(stderr, "%s: give KEY or -part, not both (got %d arguments besides %d -part)\n", name, len(args), len(k.parts))
		fs.Usage()
		return "", false
	case len(k.parts) > 0 && slices.Contains(k.parts, ""):
		// Join makes no key when a part is missing: no lock has such a key.
		fmt.Fprintf(stderr, "%s: a -part is empty\n", name)
		return "", false
	case len(k.parts) == 0 && len(args) != 1:
		fmt.Fprintf(stderr, "%s: want one KEY, got %d arguments\n", name, len(args))
		fs.Usage()
		return "", false
	case len(k.parts) == 0 && args[0] == "":
		fmt.Fprintf(stderr, "%s: KEY is empty\n", name)
		return "", false
	case strings.ContainsAny(*k.prefix, "{}"):
		fmt.Fprintf(stderr, "%s: -prefix %q must not contain '{' or '}'\n", name, *k.prefix)
		return "", false
	case *k.timeout <= 0:
		fmt.Fprintf(stderr, "%s: -timeout must be positive\n", name)
		return "", false
	}
	var key string
	if len(k.parts) > 0 {
		key = httplock.JoinKeys(k.parts...)
	} else {
		key = args[0]
	}
	if *k.scope != "" {
		key = httplock.LockKey(*k.scope, key)
	}
	return key, true
}

// keyHelp is what the usage of a command that names a key says of it.
const keyHelp = `KEY is the raw key as the application passed it to the Locker, or, with
-scope, the raw key of an HTTP request in that scope.

A route keyed with httplock.Join (the user and the Idempotency-Key, say)
locks on its parts joined: each part as its length in bytes, a colon and
the part, run together (httplock.JoinKeys). Give the parts in the order of
the Join, one -part each, and the command joins them:

  reqlock %s -scope "POST /payments" -part user-42 -part pay-1

is the key "7:user-425:pay-1" in the scope "POST /payments". The scope is
the route's Config.Scope, or its method and route template.
`
