package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/reqlock/reqlock/core"
)

// keyCommand is what a command about one key (inspect, forget) works on:
// its key, the store it was pointed at, and a Locker over that store with
// the key's prefix.
type keyCommand struct {
	key    string
	st     openedStore
	locker *core.Locker
	ctx    context.Context
	cancel context.CancelFunc
}

func (c *keyCommand) close() {
	c.cancel()
	c.st.close()
}

// startKeyCommand parses name's flags (its own added by flags, if any)
// and key, and opens the store; when it cannot, it has said why on stderr
// and returns the exit code.
func startKeyCommand(name, usage string, args []string, getenv func(string) string, stderr io.Writer, flags func(*flag.FlagSet)) (*keyCommand, int) {
	fs := flag.NewFlagSet("reqlock "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	kf := addKeyFlags(fs)
	if flags != nil {
		flags(fs)
	}
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	args, err := parseInterspersed(fs, args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return nil, exitOK
	case err != nil:
		return nil, exitUsage // the flag package has said why
	}
	key, ok := kf.key(fs, args, stderr)
	if !ok {
		return nil, exitUsage
	}
	st, err := openStore(getenv, *kf.cluster, *kf.timeout)
	if err != nil {
		fmt.Fprintf(stderr, "reqlock %s: %v\n", name, err)
		return nil, exitUsage
	}
	ctx, cancel := context.WithTimeout(context.Background(), *kf.timeout)
	return &keyCommand{key: key, st: st, locker: core.NewLocker(st.store, core.WithPrefix(*kf.prefix)), ctx: ctx, cancel: cancel}, exitOK
}
