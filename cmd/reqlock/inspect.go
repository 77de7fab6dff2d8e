package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/reqlock/reqlock/core"
)

// inspect is "reqlock inspect".
func inspect(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	var asJSON *bool
	c, code := startKeyCommand("inspect", inspectUsage, args, getenv, stderr, func(fs *flag.FlagSet) {
		asJSON = fs.Bool("json", false, "print one JSON object")
	})
	if c == nil {
		return code
	}
	defer c.close()
	st := c.st
	h, err := c.locker.Inspect(c.ctx, c.key)
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
var inspectUsage = `usage: reqlock inspect [flags] KEY
       reqlock inspect [flags] -part PART [-part PART ...]

` + fmt.Sprintf(keyHelp, "inspect") + `
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
