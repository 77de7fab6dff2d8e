package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/reqlock/reqlock/core"
)

// forget is "reqlock forget": it clears the mark of KEY's last run
// (core.Locker.ForgetRun), an operator's word that a run in doubt was
// settled by hand, so that the key runs (or replays) again instead of
// answering core.ErrInDoubt or 409 in_doubt.
func forget(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	c, code := startKeyCommand("forget", forgetUsage, args, getenv, stderr, nil)
	if c == nil {
		return code
	}
	defer c.close()
	st := c.st
	skey, _ := c.locker.StoreKey(c.key)
	switch err := c.locker.ForgetRun(c.ctx, c.key); {
	case errors.Is(err, core.ErrNoRunMarks):
		fmt.Fprintf(stderr, "reqlock forget: %s keeps no records, so no run on it is ever in doubt: nothing to forget\n", st.where)
		return exitUsage
	case err != nil:
		fmt.Fprintf(stderr, "reqlock forget: cannot clear the run mark of %s on %s: %v\n", skey, st.where, err)
		return exitStore
	}
	_, err := fmt.Fprintf(stdout, "cleared  the run mark of %s, if it had one: the next run of the key goes ahead\n", skey)
	if err != nil {
		return exitStore
	}
	return exitOK
}

// forgetUsage is the head of "reqlock forget -h".
var forgetUsage = `usage: reqlock forget [flags] KEY
       reqlock forget [flags] -part PART [-part PART ...]

Clears the mark of KEY's last run. A run that lost its lock without
recording its outcome (its process crashed, or paused past its lease)
leaves the mark, and with the refuse policy (core.RefuseInDoubt,
ReplayConfig.InDoubt) every later run of the key is refused, with
core.ErrInDoubt or 409 in_doubt, until the mark's retention ends. Once
you have settled that run by hand (the payment was made, or was not),
forget the mark: the next request with the key runs again. The lock
itself and a recorded response are left as they are.

` + fmt.Sprintf(keyHelp, "forget") + `
` + storeHelp + `
`
