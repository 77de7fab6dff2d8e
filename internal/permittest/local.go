package permittest

import (
	"context"
	"time"

	"github.com/reqlock/reqlock/core"
)

// StartLocal starts an instance named name in this process: a Semaphore of
// the run's N on a Locker of its own over s, holding each permit for up to
// pause between its two writes, until the run stops. s may reach its
// server through a fault proxy that the scenario drives.
func (r *Run) StartLocal(name string, s core.Store, pause time.Duration) {
	r.StartSemaphore(name, s, r.N, pause)
}

// StartSemaphore is StartLocal with a limit of its own, for a broken
// setup that admits more than the run's N.
func (r *Run) StartSemaphore(name string, s core.Store, limit int, pause time.Duration) {
	h := &holder{who: name, sem: newSemaphore(s, limit, r.TTL, name), ttl: r.TTL, w: r.Reg, emit: r.Add, pause: pause}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.run(ctx)
	}()
	r.onStop(func() {
		cancel()
		<-done
	})
}
