package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
)

// inspect is "reqlock inspect".
func inspect(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("reqlock inspect", flag.ContinueOnError)
	fs.SetOutput(stderr)
	prefix := fs.String("prefix", core.DefaultPrefix, "the Locker's key prefix (core.WithPrefix)")
	scope := fs.String("scope", "", `the HTTP scope of KEY, e.g. "POST /orders/{id}" (httplock.LockKey); empty: KEY is the Locker's key`)
	asJSON := fs.Bool("json", false, "print one JSON object")
	timeout := fs.Duration("timeout", 5*time.Second, "how long to wait for the store")
	cluster := fs.Bool("cluster", false, "REDIS_URL names a Redis Cluster")
	var parts []string
	fs.Func("part", "one part of a key made with httplock.Join, in order; repeat it for each part, instead of KEY", func(p string) error {
		parts = append(parts, p)
		return nil
	})
	fs.Usage = func() {
		fmt.Fprint(stderr, inspectUsage)
		fs.PrintDefaults()
	}
	keys, err := parseInterspersed(fs, args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return exitOK
	case err != nil:
		return exitUsage // the flag package has said why
	case len(parts) > 0 && len(keys) > 0:
		fmt.Fprintf(stderr, "reqlock inspect: give KEY or -part, not both (got %d arguments besides %d -part)\n", len(keys), len(parts))
		fs.Usage()
		return exitUsage
	case len(parts) > 0 && slices.Contains(parts, ""):
		// Join makes no key when a part is missing: no lock has such a key.
		fmt.Fprintln(stderr, "reqlock inspect: a -part is empty")
		return exitUsage
	case len(parts) == 0 && len(keys) != 1:
		fmt.Fprintf(stderr, "reqlock inspect: want one KEY, got %d arguments\n", len(keys))
		fs.Usage()
		return exitUsage
	case len(parts) == 0 && keys[0] == "":
		fmt.Fprintln(stderr, "reqlock inspect: KEY is empty")
		return exitUsage
	case strings.ContainsAny(*prefix, "{}"):
		fmt.Fprintf(stderr, "reqlock inspect: -prefix %q must not contain '{' or '}'\n", *prefix)
		return exitUsage
	case *timeout <= 0:
		fmt.Fprintln(stderr, "reqlock inspect: -timeout must be positive")
		return exitUsage
	}
	var key string
	if len(parts) > 0 {
		key = httplock.JoinKeys(parts...)
	} else {
		key = keys[0]
	}
	if *scope != "" {
		key = httplock.LockKey(*scope, key)
	}

	st, err := openStore(getenv, *cluster, *timeout)
	if err != nil {
		fmt.Fprintf(stderr, "reqlock inspect: %v\n", err)
		return exitUsage
	}
	defer st.close()

	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	locker := core.NewLocker(st.store, core.WithPrefix(*prefix))
	h, err := locker.Inspect(ctx, key)
	if err != nil {
		fmt.Fprintf(stderr, "reqlock inspect: cannot read %s from %s: %v\n", h.StoreKey, st.where, err)
		return exitStore
	}
	if *asJSON {
		err = printJSON(stdout, h)
	} else {
		err = printText(stdout, h)
	}
	if err != nil {
		fmt.Fprintf(stderr, "reqlock inspect: %v\n", err)
		return exitStore
	}
	return exitOK
}

// inspectUsage is the head of "reqlock inspect -h": how the key is found.
const inspectUsage = `usage: reqlock inspect [flags] KEY
       reqlock inspect [flags] -part PART [-part PART ...]

KEY is the raw key as the application passed it to the Locker, or, with
-scope, the raw key of an HTTP request in that scope.

A route keyed with httplock.Join (the user and the Idempotency-Key, say)
locks on its parts joined: each part as its length in bytes, a colon and
the part, run together (httplock.JoinKeys). Give the parts in the order of
the Join, one -part each, and the command joins them:

  reqlock inspect -scope "POST /payments" -part user-42 -part pay-1

is the key "7:user-425:pay-1" in the scope "POST /payments". The scope is
the route's Config.Scope, or its method and route template.

` + storeHelp + `
`

// parseInterspersed parses flags before and after the positional
// arguments, so that "inspect KEY -json" works; after "--" everything is
// positional.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, nil
		}
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			return append(positional, rest...), nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

// printText prints h one field a line, "name  value", always the same
// fields in the same order.
func printText(w io.Writer, h core.Holding) error {
	state := "free"
	switch {
	case h.Expired:
		state = "held past its lease (a transaction the holder guarded keeps the key until it ends)"
	case h.HandedOff:
		state = "handed off (to the next waiter in line, which may be running under it)"
	case h.Held:
		state = "held"
	}
	holder := h.Holder
	switch {
	case holder == "":
		holder = "-"
	case !printable(holder):
		// Not a label WithHolder would take: written by something else,
		// and shown quoted so that it cannot pose as lines of its own.
		holder = strconv.Quote(holder)
	}
	_, err := fmt.Fprintf(w, "state    %s\nholder   %s\nlease    %v\nfence    %d\nwaiting  %d\nkey      %s\n",
		state, holder, h.Lease.Round(time.Millisecond), h.Fence, h.Waiting, h.StoreKey)
	return err
}

// printJSON prints h in its JSON form (core.Holding's MarshalJSON), the
// same an operator's endpoint gets from json.Marshal.
func printJSON(w io.Writer, h core.Holding) error {
	return json.NewEncoder(w).Encode(h)
}

// printable reports whether s is printable ASCII only.
func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}
