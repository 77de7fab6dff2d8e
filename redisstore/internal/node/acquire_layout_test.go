package node

import (
	"strings"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/internal/redistest"
)

// Every acquire, asking for the record or not, sends one and the same
// script (the record look-up first), so one SHA serves all three layouts.
func TestAcquireLayoutsShareOneScript(t *testing.T) {
	if !strings.HasPrefix(acquireLua, acquireRecordLua+fenceLua) || !strings.HasSuffix(acquireLua, acquireBody) {
		t.Fatal("acquireLua is not acquire_record.lua + fence.lua + acquire.lua")
	}
	for _, c := range []scriptCall{acquireCall, acquireRecordCall, acquireQueuedCall} {
		if c.sha != acquireCall.sha || c.source != acquireCall.source {
			t.Fatalf("the acquire calls differ in script: %v", c.numKeys)
		}
	}
}

// The record look-up now runs before acquire.lua checks the fence's clock.
// The callers that send a clock (the store's reckoning of the server's,
// redlock.Store's own) only send digits: a bad one still meets the check,
// plain and in line. A waiter that asked with a bad clock would get the
// record instead of the error; nothing sends that.
func TestClockStillCheckedWhereSent(t *testing.T) {
	c := redistest.Start(t).Client(t)
	ctx := t.Context()
	l := store.Lease{Key: "reqlock:{clock-check}", Token: "t", TTL: time.Second}
	if err := c.Set(ctx, l.Key+recordSuffix, "done", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	ttl, fttl := int64(1000), int64(60000)
	for name, args := range map[string]func() (scriptCall, []any){
		"plain":   func() (scriptCall, []any) { return acquireCall, append(acquireArgs(l, ttl, fttl, 1), "0123") },
		"in line": func() (scriptCall, []any) { return acquireQueuedCall, queuedArgs(l, ttl, fttl, "0123", "w", false) },
	} {
		call, a := args()
		if _, err := acquireReply(run(ctx, c, call, a)); err == nil || !strings.Contains(err.Error(), "fence clock") {
			t.Errorf("%s with a bad clock: %v; want the clock error", name, err)
		}
	}
	// Pinned: a waiter asking for the record with a bad clock is answered
	// with the record (before the change: the clock error).
	a, err := acquireReply(run(ctx, c, acquireQueuedCall, queuedArgs(l, ttl, fttl, "0123", "w", true)))
	if err != nil || string(a.record) != "done" {
		t.Errorf("in line with the record and a bad clock: %q, %v", a.record, err)
	}
	if n := c.Exists(ctx, l.Key, l.Key+queueSuffix).Val(); n != 0 {
		t.Errorf("%d keys set up by rejected attempts", n)
	}
}
