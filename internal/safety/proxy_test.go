package safety

import (
	"time"

	"github.com/reqlock/reqlock/internal/faultproxy"
)

// longHold is the pause of a worker that holds the lock across a fault: it
// relies on the watchdog to keep it.
func longHold(ttl time.Duration) func() time.Duration {
	return func() time.Duration { return 3 * ttl }
}

// cutOff waits until w holds the lock, then drops every byte both ways
// through p for d, then heals.
func cutOff(r *run, p *faultproxy.Proxy, w *Worker, d time.Duration) {
	if !r.heldBy(w) {
		return
	}
	time.Sleep(10 * time.Millisecond)
	p.Drop(faultproxy.Upstream)
	p.Drop(faultproxy.Downstream)
	time.Sleep(d)
	p.Heal()
	p.Cut() // go-redis drops connections it timed out on; make sure none is left half-dead
}
