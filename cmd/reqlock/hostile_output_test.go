package main

import (
	"strings"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/redisstore"
)

// A REDIS_URL the command cannot parse is a usage error; the message must
// not repeat the password in it: stderr ends up in terminals, CI logs and
// tickets.
func TestInspectCommandBadURLKeepsPasswordOut(t *testing.T) {
	const password = "s3cret-pw-7781"
	for _, url := range []string{
		"redis://user:" + password + "@127.0.0.1:badport/0",
		"redis://us er:" + password + "@127.0.0.1:6379/0",
		"redis://user:" + password + "%zz@127.0.0.1:6379/0",
	} {
		r := runCmd(url, "inspect", "k")
		if r.code != exitUsage {
			t.Errorf("%q: exit %d, want %d", url, r.code, exitUsage)
		}
		if strings.Contains(r.stderr, password) || strings.Contains(r.stdout, password) {
			t.Errorf("the password is in the output of a bad REDIS_URL:\nstderr: %s", r.stderr)
		}
	}
}

// The text form is one field a line. Whatever the store holds after the
// first '.' of a lock's value is printed as the holder, so a value written
// by something else than a Locker (WithHolder allows only printable ASCII)
// must not be able to add lines, such as a second state that says free.
func TestInspectCommandHolderCannotForgeLines(t *testing.T) {
	srv := redistest.Start(t)
	ctx := ctxT(t)
	c := srv.Client(t)
	skey, _ := core.NewLocker(redisstore.New(c)).StoreKey("order:1")
	if err := c.Set(ctx, skey, "tok.web-1\nstate    free\x1b[2K", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	r := runCmd("redis://"+srv.Addr, "inspect", "order:1")
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if len(lines) != 6 || strings.ContainsAny(r.stdout, "\x1b") {
		t.Errorf("the holder's text added lines or control characters to the output (%d lines, want 6):\n%q", len(lines), r.stdout)
	}
}
