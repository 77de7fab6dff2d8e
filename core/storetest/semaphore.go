package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
)

var semaphorePromises = []promise{
	{"at-most-n", limited(semaphoreAtMostN)},
	{"at-most-n-locker", limited(semaphoreAtMostNThroughLockers)},
	{"fences", limited(semaphoreFences)},
	{"stale", limited(semaphoreStale)},
	{"expired-frees", limited(semaphoreExpiredFrees)},
	{"line-in-turn", limited(semaphoreLineInTurn)},
	{"line-across-lockers", limited(semaphoreLineAcrossLockers)},
	{"line-turns", limited(semaphoreLineTurns)},
	{"line-across-stores", limited(semaphoreLineAcrossStores)},
	{"line-turns-across-stores", limited(semaphoreLineTurnsAcrossStores)},
	{"line-keep", semaphoreLineKeep},
	{"inspect", limited(semaphoreInspect)},
	{"limits-per-call", semaphoreLimitsPerCall},
	{"apart-from-locks", limited(semaphoreApartFromLocks)},
	{"late-acquire", semaphoreLateAcquire},
}

const semaphoreMeaning = "it keeps no permits: a Semaphore over it answers core.ErrSemaphoreUnsupported"

// semaphoreLimits are the limits every semaphore promise is checked with.
var semaphoreLimits = []int{1, 2, 5}

// limited runs check once per limit, as a subtest "N=n".
func limited(check func(t *testing.T, h Harness, n int)) func(*testing.T, Harness) {
	return func(t *testing.T, h Harness) {
		for _, n := range semaphoreLimits {
			t.Run(fmt.Sprintf("N=%d", n), func(t *testing.T) { check(t, h, n) })
		}
	}
}

// permits is the fixture's store as store.Semaphores, or a skip.
func (f *fixture) permits() store.Semaphores {
	f.t.Helper()
	return as[store.Semaphores](f, "store.Semaphores", semaphoreMeaning)
}

// takePermit takes a permit of l, or fails the test.
func (f *fixture) takePermit(ps store.Semaphores, l store.Lease, n int) store.Grant {
	f.t.Helper()
	g, err := ps.AcquirePermit(f.ctx, l, n)
	if err != nil {
		f.t.Fatalf("AcquirePermit with %d of %d permits held: %v", f.countPermits(ps, l.Key), n, err)
	}
	return g
}

// countPermits is how many permits of key InspectPermits lists.
func (f *fixture) countPermits(ps store.Semaphores, key string) int {
	hs, err := ps.InspectPermits(f.ctx, key)
	if err != nil {
		return -1
	}
	return len(hs)
}

// mustBeFull checks that a fresh token gets no permit of key with limit n,
// and that the answer says for how long at most (the shortest lease left).
func (f *fixture) mustBeFull(ps store.Semaphores, key string, n int, lease time.Duration, why string) {
	f.t.Helper()
	l := f.lease(key, f.h.short())
	g, err := ps.AcquirePermit(f.ctx, l, n)
	if err == nil {
		_ = ps.ReleasePermit(f.ctx, l.Key, l.Token)
		f.t.Fatalf("%s: permit %d of limit %d was granted (fence %d)", why, n+1, n, g.Fence)
	}
	if !errors.Is(err, core.ErrNotObtained) {
		f.t.Fatalf("%s: AcquirePermit of a full key: %v, want ErrNotObtained", why, err)
	}
	if d, ok := core.HolderTTL(err); !ok || d > lease {
		f.t.Fatalf("%s: a full key's answer says the first permit frees in %v (known: %v), want within the lease %v", why, d, ok, lease)
	}
}

// N tokens take the N permits of a key; the next is refused with the
// shortest lease left (the first permit's, half the others'); once one is
// released, exactly one more is granted.
func semaphoreAtMostN(t *testing.T, h Harness, n int) {
	f := open(t, h)
	ps := f.permits()
	key := f.key()
	var held []store.Lease
	for i := range n {
		lease := h.long()
		if i == 0 {
			lease /= 2
		}
		l := f.lease(key, lease)
		f.takePermit(ps, l, n)
		held = append(held, l)
	}
	f.mustBeFull(ps, key, n, h.long()/2, "with every permit held, the first on half the others' lease")
	if err := ps.ReleasePermit(f.ctx, key, held[0].Token); err != nil {
		t.Fatalf("ReleasePermit by a holder: %v", err)
	}
	f.takePermit(ps, f.lease(key, h.long()), n)
	f.mustBeFull(ps, key, n, h.long(), "with the released permit taken again")
}

// Many goroutines of several Lockers race for the permits of one key
// through Semaphore.Do: never more than N are inside at once.
func semaphoreAtMostNThroughLockers(t *testing.T, h Harness, n int) {
	f := open(t, h)
	f.permits()
	key := random()
	const lockers, perLocker, rounds = 3, 4, 3
	var inside, most atomic.Int32
	var wg sync.WaitGroup
	for range lockers {
		sem := f.locker(core.WithTTL(h.long())).Semaphore(n)
		for range perLocker {
			wg.Go(func() {
				for range rounds {
					err := sem.Do(f.ctx, key, func(context.Context) error {
						k := inside.Add(1)
						defer inside.Add(-1)
						for m := most.Load(); k > m && !most.CompareAndSwap(m, k); m = most.Load() {
						}
						if k > int32(n) {
							t.Errorf("%d holders at once, limit %d", k, n)
						}
						time.Sleep(time.Millisecond)
						return nil
					})
					if err != nil {
						t.Errorf("Semaphore.Do: %v", err)
						return
					}
				}
			})
		}
	}
	wg.Wait()
	if most.Load() < 1 {
		t.Fatal("nobody ever held a permit")
	}
	t.Logf("at most %d holders at once of %d allowed", most.Load(), n)
}

// Every permit's fence is above those of the permits before it, released
// or still held.
func semaphoreFences(t *testing.T, h Harness, n int) {
	f := open(t, h)
	ps := f.permits()
	key := f.key()
	var last uint64
	for round := range 3 {
		var held []store.Lease
		for i := range n {
			l := f.lease(key, h.long())
			g := f.takePermit(ps, l, n)
			if g.Fence <= last {
				t.Fatalf("round %d, permit %d: fence %d, not above the last, %d", round, i, g.Fence, last)
			}
			last = g.Fence
			held = append(held, l)
		}
		for _, l := range held {
			if err := ps.ReleasePermit(f.ctx, key, l.Token); err != nil {
				t.Fatalf("ReleasePermit: %v", err)
			}
		}
	}
}

// A token that holds no permit, or held one that was released or ran
// out, can neither release nor extend one, nor read its TTL; and nothing
// of another holder's is touched by the attempt.
func semaphoreStale(t *testing.T, h Harness, n int) {
	f := open(t, h)
	ps := f.permits()
	key := f.key()
	other := f.lease(key, h.long())
	f.takePermit(ps, other, n)
	stranger := f.lease(key, h.long())
	checkStale(f, ps, stranger, "a token that never held a permit")

	released := f.lease(key, h.long())
	if n > 1 {
		f.takePermit(ps, released, n)
		if err := ps.ReleasePermit(f.ctx, key, released.Token); err != nil {
			t.Fatalf("ReleasePermit by its holder: %v", err)
		}
		checkStale(f, ps, released, "a released permit")
	}

	if err := ps.ReleasePermit(f.ctx, key, other.Token); err != nil {
		t.Fatalf("ReleasePermit by its holder: %v", err)
	}
	expired := f.lease(key, h.short())
	f.takePermit(ps, expired, n)
	time.Sleep(h.short() + h.short()/2)
	for range n { // the expired permit's place is taken
		f.takePermit(ps, f.lease(key, h.long()), n)
	}
	checkStale(f, ps, expired, "a permit whose lease ran out and whose place was taken")
	if c := f.countPermits(ps, key); c != n {
		t.Fatalf("InspectPermits lists %d permits, want the %d held", c, n)
	}
}

func checkStale(f *fixture, ps store.Semaphores, l store.Lease, what string) {
	f.t.Helper()
	if err := ps.ReleasePermit(f.ctx, l.Key, l.Token); !errors.Is(err, core.ErrNotHeld) {
		f.t.Fatalf("ReleasePermit of %s: %v, want ErrNotHeld", what, err)
	}
	if r := ps.ExtendPermits(f.ctx, []store.Lease{l}); len(r) != 1 || !errors.Is(r[0].Err, core.ErrNotHeld) {
		f.t.Fatalf("ExtendPermits of %s: %+v, want ErrNotHeld", what, r)
	}
	if _, err := ps.PermitTTL(f.ctx, l.Key, l.Token); !errors.Is(err, core.ErrNotHeld) {
		f.t.Fatalf("PermitTTL of %s: %v, want ErrNotHeld", what, err)
	}
}

// N permits that nobody releases or renews free their places when their
// leases run out: a crashed holder costs one lease. A renewed permit
// outlives its first lease.
func semaphoreExpiredFrees(t *testing.T, h Harness, n int) {
	f := open(t, h)
	ps := f.permits()
	key := f.key()
	renewed := f.lease(key, h.short())
	f.takePermit(ps, renewed, n)
	for range n - 1 {
		f.takePermit(ps, f.lease(key, h.short()), n)
	}
	f.mustBeFull(ps, key, n, h.short(), "with every permit held on a short lease")
	long := renewed
	long.TTL = h.long()
	if r := ps.ExtendPermits(f.ctx, []store.Lease{long}); r[0].Err != nil {
		t.Fatalf("ExtendPermits of a held permit: %v", r[0].Err)
	}
	deadline := time.Now().Add(h.patience())
	for f.countPermits(ps, key) > 1 {
		if time.Now().After(deadline) {
			t.Fatalf("%d permits still listed %v after their leases of %v ran out", f.countPermits(ps, key), h.patience(), h.short())
		}
		time.Sleep(h.short() / 10)
	}
	for range n - 1 {
		f.takePermit(ps, f.lease(key, h.long()), n)
	}
	f.mustBeFull(ps, key, n, h.long(), "with the renewed permit still held")
	if d, err := ps.PermitTTL(f.ctx, key, renewed.Token); err != nil || d <= h.short() {
		t.Fatalf("PermitTTL of the renewed permit: %v, %v; want more than the first lease %v", d, err, h.short())
	}
}

// Inspect lists every holder, in the order granted, with its lease and
// fence; a released permit leaves the list.
func semaphoreInspect(t *testing.T, h Harness, n int) {
	f := open(t, h)
	ps := f.permits()
	key := f.key()
	if hs, err := ps.InspectPermits(f.ctx, key); err != nil || len(hs) != 0 {
		t.Fatalf("InspectPermits of an unused key: %+v, %v; want none", hs, err)
	}
	var leases []store.Lease
	var fences []uint64
	for i := range n {
		l := f.lease(key, h.long())
		l.Token += store.HolderSep + fmt.Sprintf("holder-%d", i)
		fences = append(fences, f.takePermit(ps, l, n).Fence)
		leases = append(leases, l)
	}
	hs, err := ps.InspectPermits(f.ctx, key)
	if err != nil {
		t.Fatalf("InspectPermits: %v", err)
	}
	if len(hs) != n {
		t.Fatalf("InspectPermits lists %d holders, want %d: %+v", len(hs), n, hs)
	}
	for i, hd := range hs {
		if !hd.Held || hd.Fence != fences[i] || hd.Holder != fmt.Sprintf("holder-%d", i) || hd.Lease <= 0 || hd.Lease > h.long() {
			t.Fatalf("holding %d: %+v, want held by holder-%d, fence %d, a lease within %v", i, hd, i, fences[i], h.long())
		}
	}
	if err := ps.ReleasePermit(f.ctx, key, leases[0].Token); err != nil {
		t.Fatalf("ReleasePermit: %v", err)
	}
	if hs, _ := ps.InspectPermits(f.ctx, key); len(hs) != n-1 {
		t.Fatalf("after a release InspectPermits lists %d holders, want %d", len(hs), n-1)
	}
}

// The limit is each call's own: a caller with limit 2 is refused while two
// permits are held, one with limit 5 is admitted until five are.
func semaphoreLimitsPerCall(t *testing.T, h Harness) {
	f := open(t, h)
	ps := f.permits()
	key := f.key()
	var leases []store.Lease
	for _, limit := range []int{2, 2} {
		l := f.lease(key, h.long())
		f.takePermit(ps, l, limit)
		leases = append(leases, l)
	}
	f.mustBeFull(ps, key, 2, h.long(), "limit 2 with two permits held")
	for range 3 {
		l := f.lease(key, h.long())
		f.takePermit(ps, l, 5)
		leases = append(leases, l)
	}
	f.mustBeFull(ps, key, 5, h.long(), "limit 5 with five permits held")
	f.mustBeFull(ps, key, 2, h.long(), "limit 2 with five permits held")
	// Limit 5 was used, and three permits are left: limit 2 is still full.
	for _, l := range leases[:2] {
		if err := ps.ReleasePermit(f.ctx, key, l.Token); err != nil {
			t.Fatalf("ReleasePermit by a holder: %v", err)
		}
	}
	f.mustBeFull(ps, key, 2, h.long(), "limit 2 with three permits held, after limit 5 was used")

	// The same through two Semaphores of one Locker.
	l := f.locker(core.WithTTL(h.long()))
	two, five := l.Semaphore(2), l.Semaphore(5)
	k := random()
	var held []*core.Lock
	defer func() {
		for _, lk := range held {
			_ = lk.Release(context.Background())
		}
	}()
	for range 2 {
		lk, err := two.TryObtain(f.ctx, k)
		if err != nil {
			t.Fatalf("Semaphore(2).TryObtain with fewer than 2 held: %v", err)
		}
		held = append(held, lk)
	}
	if lk, err := two.TryObtain(f.ctx, k); !errors.Is(err, core.ErrNotObtained) {
		if lk != nil {
			held = append(held, lk)
		}
		t.Fatalf("Semaphore(2).TryObtain with 2 held: %v, want ErrNotObtained", err)
	}
	lk, err := five.TryObtain(f.ctx, k)
	if err != nil {
		t.Fatalf("Semaphore(5).TryObtain with 2 held: %v", err)
	}
	held = append(held, lk)
	hs, err := five.Inspect(f.ctx, k)
	if err != nil || len(hs) != 3 {
		t.Fatalf("Inspect: %d holders, %v; want 3", len(hs), err)
	}
}

// A key's permits and its lock never meet: every permit held, the lock is
// free, and the lock held, every permit is granted.
func semaphoreApartFromLocks(t *testing.T, h Harness, n int) {
	f := open(t, h)
	ps := f.permits()
	key := f.key()
	for range n {
		f.takePermit(ps, f.lease(key, h.long()), n)
	}
	lock := f.lease(key, h.long())
	f.acquire(lock)
	f.mustBeFull(ps, key, n, h.long(), "the lock held too")
	if err := f.s.Release(f.ctx, key, lock.Token); err != nil {
		t.Fatalf("Release of the lock beside the permits: %v", err)
	}
	if c := f.countPermits(ps, key); c != n {
		t.Fatalf("%d permits listed after the lock's release, want %d", c, n)
	}
}
