package safety

import (
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/redisstore"
)

// crashed starts one Redis and three workers: g1 holds for holdFor at a
// time, g2 and g3 briefly.
func crashed(t *testing.T, ttl, holdFor time.Duration) (*run, *redistest.Server, *Worker) {
	srv := redistest.Start(t)
	r := newRun(t, true)
	a := r.worker(locker(redisstore.New(client(t, srv.Addr)), ttl), func() time.Duration { return holdFor })
	for range 2 {
		r.worker(locker(redisstore.New(client(t, srv.Addr)), ttl), RandomPause(2*time.Millisecond))
	}
	r.start()
	return r, srv, a
}

// kill -9 while g1 holds, and an empty Redis at once on the same port. The
// docs: every lock is gone and can be taken again right away — two
// holders — while the fence keeps growing across the restart, so g1's
// write after it is refused.
func redisKillRestart(t *testing.T) {
	const ttl = time.Second // g1 renews at a third of it: well after the restart
	r, srv, a := crashed(t, ttl, 600*time.Millisecond)
	r.faultsUntilDone(func() {
		if r.heldBy(a) {
			time.Sleep(20 * time.Millisecond)
			srv.Restart()
			time.Sleep(700 * time.Millisecond) // g1's hold ends; the next cycle waits for a fresh one
		}
	})
	r.finish("kill -9 while held, restart empty at once", "redis", expect{
		overlap: must, lateLost: must, stale: never, lostUpd: never, refused: must})
}

// SIGSTOP Redis for one and a half leases while g1 holds: g1's renewals
// hang, and its Lost() fires by its own clock before Redis, resumed, lets
// anyone else in.
func redisPause(t *testing.T) {
	const ttl = 500 * time.Millisecond
	r, srv, a := crashed(t, ttl, 3*ttl)
	r.faultsUntilDone(func() {
		if r.heldBy(a) {
			time.Sleep(20 * time.Millisecond)
			srv.Pause()
			time.Sleep(ttl * 3 / 2)
			srv.Resume()
		}
	})
	r.finish("Redis SIGSTOPped for 1.5 leases while held", "redis", safe)
}

// The holder is a process, stopped (SIGSTOP) between its read and its write
// for two leases. The docs: a paused holder cannot be stopped by a lease —
// another worker takes over, and for a while both believe they hold the
// lock — but when it resumes its write is fenced off, its Lost() fires, and
// its release frees nothing.
func processPause(t *testing.T) {
	srv := redistest.Start(t)
	r := newRun(t, true)
	const ttl = 500 * time.Millisecond
	for range 2 {
		r.worker(locker(redisstore.New(client(t, srv.Addr)), ttl), RandomPause(2*time.Millisecond))
	}
	r.start()

	var mu sync.Mutex
	var resumedAt int64
	reads := make(chan struct{}, 1)
	p := r.spawn(workerConfig{Name: "p1", Redis: []string{srv.Addr}, TTL: ttl, Pause: 300 * time.Millisecond},
		func(e Event) {
			if e.Worker == "p1" && e.Kind == Read && e.Type == OK {
				select {
				case reads <- struct{}{}:
				default:
				}
			}
		})
	stopped := 0
	r.faultsUntilDone(func() {
		select {
		case <-reads:
		case <-time.After(5 * time.Second):
			return
		}
		p.signal(t, syscall.SIGSTOP) // inside its 0–300ms pause between read and write
		time.Sleep(2 * ttl)
		mu.Lock()
		resumedAt = Now()
		mu.Unlock()
		p.signal(t, syscall.SIGCONT)
		stopped++
		time.Sleep(ttl) // let it write, hear of the loss and release
		select {
		case <-reads: // a read from before the stop: the next stop waits for a fresh one
		default:
		}
	})
	rw := r.finish("holder process SIGSTOPped for 2 leases mid-hold", "redis", expect{
		overlap: must, lateLost: must, stale: never, lostUpd: never, refused: must})
	if stopped == 0 || rw.ops == 0 {
		return
	}
	// The first release p1 made after being resumed found the lock gone.
	mu.Lock()
	defer mu.Unlock()
	for _, e := range r.hist.Events() {
		if e.Worker == "p1" && e.Kind == Release && e.Type != Invoke && e.T > resumedAt {
			if e.Type != Fail || !strings.Contains(e.Err, core.ErrNotHeld.Error()) {
				t.Errorf("the resumed holder's release: %s %q, want ErrNotHeld", e.Type, e.Err)
			}
			return
		}
	}
	t.Error("the resumed holder never released")
}
