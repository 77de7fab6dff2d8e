package etcdstore_test

import (
	"errors"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core/store"
)

// The permit line wakes whoever is next without anyone asking again: a
// waiter that leaves wakes the one behind it (which watched it), and a
// release wakes the head (which watches the permits).
func TestPermitLineWakesOnLeaveAndRelease(t *testing.T) {
	st, _ := newStore(t)
	ctx := ctxFor(t, 30*time.Second)
	const key = "plw/{k}"
	ttl := 10 * time.Second
	woken := make(chan string, 16)
	done, err := st.SubscribePermits("plw/", "i1", func(_, waiter string) { woken <- waiter }).Hold(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	if _, err := st.AcquirePermit(ctx, store.Lease{Key: key, Token: "holder", TTL: ttl}, 1); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"i1/a", "i1/b", "i1/c"} {
		if _, err := st.AcquirePermitQueued(ctx, store.Lease{Key: key, Token: w + "-0", TTL: ttl}, 1, w); !errors.Is(err, store.ErrNotObtained) {
			t.Fatalf("%s joins the line: %v", w, err)
		}
	}
	expect := func(want, why string) {
		t.Helper()
		select {
		case got := <-woken:
			if got != want {
				t.Fatalf("%s woke %s, want %s", why, got, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s woke nobody, want %s", why, want)
		}
	}
	if err := st.LeavePermitLine(ctx, key, "i1/b"); err != nil {
		t.Fatal(err)
	}
	expect("i1/c", "b leaving")
	// c asks again, and now watches a.
	if _, err := st.AcquirePermitQueued(ctx, store.Lease{Key: key, Token: "i1/c-1", TTL: ttl}, 1, "i1/c"); !errors.Is(err, store.ErrNotObtained) {
		t.Fatalf("c asks again: %v", err)
	}
	if err := st.ReleasePermit(ctx, key, "holder"); err != nil {
		t.Fatal(err)
	}
	expect("i1/a", "the release")
	if _, err := st.AcquirePermitQueued(ctx, store.Lease{Key: key, Token: "i1/a-1", TTL: ttl}, 1, "i1/a"); err != nil {
		t.Fatalf("a, woken: %v", err)
	}
	expect("i1/c", "a admitted")
}
