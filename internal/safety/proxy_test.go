package safety

import (
	"testing"
	"time"

	"github.com/reqlock/reqlock/core/storetest/faultproxy"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/redisstore"
)

// Network faults between one holder and Redis, through the loopback fault
// proxy. Worker g1 reaches Redis through the proxy and holds the lock for
// three leases at a time, relying on its watchdog; g2 goes direct and takes
// over whenever g1 loses the lock. Whatever the fault, the docs promise one
// holder at a time and a Lost() that fires before the other can acquire.

// proxyTTL leaves a margin of 7ms between the holder's Lost() and the
// key's expiry in Redis.
const proxyTTL = 500 * time.Millisecond

// longHold is the pause of a worker that holds the lock across a fault: it
// relies on the watchdog to keep it.
func longHold(ttl time.Duration) func() time.Duration {
	return func() time.Duration { return 3 * ttl }
}

// proxied starts Redis, the proxy, and the two workers.
func proxied(t *testing.T) (*run, *faultproxy.Proxy, *Worker) {
	srv := redistest.Start(t)
	p := faultproxy.Start(t, srv.Addr)
	r := newRun(t, true)
	a := r.worker(locker(redisstore.New(client(t, p.Addr())), proxyTTL), longHold(proxyTTL))
	r.worker(locker(redisstore.New(client(t, srv.Addr)), proxyTTL), RandomPause(2*time.Millisecond))
	r.start()
	return r, p, a
}

// whileHeld waits until w holds the lock afresh, lets it settle, and runs
// fault; then heals p and cuts what is left of the faulted connections.
func whileHeld(r *run, p *faultproxy.Proxy, w *Worker, fault func()) {
	if !r.heldBy(w) {
		return
	}
	time.Sleep(10 * time.Millisecond)
	fault()
	p.Heal()
	p.Cut() // go-redis drops connections it timed out on; make sure none is left half-dead
}

// cutOff drops every byte both ways through p for d while w holds the lock.
func cutOff(r *run, p *faultproxy.Proxy, w *Worker, d time.Duration) {
	whileHeld(r, p, w, func() {
		p.Drop(faultproxy.Upstream)
		p.Drop(faultproxy.Downstream)
		time.Sleep(d)
	})
}

var safe = expect{overlap: never, lateLost: never, stale: never, lostUpd: never, refused: may}

func proxyDelay(t *testing.T) {
	r, p, a := proxied(t)
	r.faultsUntilDone(func() {
		whileHeld(r, p, a, func() {
			p.Delay(faultproxy.Upstream, proxyTTL/4)
			p.Delay(faultproxy.Downstream, proxyTTL/4)
			time.Sleep(2 * proxyTTL)
		})
	})
	r.finish("holder's bytes delayed by half the lease a round trip", "redis", safe)
}

func proxyHold(t *testing.T) {
	r, p, a := proxied(t)
	r.faultsUntilDone(func() {
		whileHeld(r, p, a, func() {
			p.Hold(faultproxy.Upstream)
			time.Sleep(2 * proxyTTL) // then Heal lets the held renewals land, late
		})
	})
	r.finish("holder's commands held past the lease, then delivered", "redis", safe)
}

func proxyDrop(t *testing.T) {
	r, p, a := proxied(t)
	r.faultsUntilDone(func() { cutOff(r, p, a, 2*proxyTTL) })
	r.finish("holder's bytes dropped both ways past the lease", "redis", safe)
}

func proxyCut(t *testing.T) {
	r, p, a := proxied(t)
	r.faultsUntilDone(func() {
		whileHeld(r, p, a, func() {
			for range int(2 * proxyTTL / (7 * time.Millisecond)) {
				p.Cut() // mid-command, whatever is on the wire
				time.Sleep(7 * time.Millisecond)
			}
		})
	})
	r.finish("holder's connections cut every 7ms for two leases", "redis", safe)
}
