package httpcases

import (
	"net/http"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
)

// A release that fails while the store stalls is retried once the store is
// back: the key is free again soon, not only when the lease runs out.
func failedReleaseRetried(e *Env) {
	if e.Backend.Hang == nil {
		e.T.Skip("this store cannot hang")
	}
	p := e.Probe()
	const lease = 8 * time.Second
	cfg := httplock.Config{Locker: e.Locker(core.WithTTL(lease)), StoreTimeout: 300 * time.Millisecond}
	url := e.Serve(userRoute("POST", "/orders", cfg, p.Block))
	finish := e.Hold(p, "POST", url+"/orders", UserHeader, "alice")
	e.Backend.Hang()
	finish() // the handler returns; its release times out
	e.Backend.Resume()
	back := time.Now()
	for {
		r := e.Send("POST", url+"/orders", UserHeader, "alice")
		if r.Err == nil && r.Status == http.StatusOK {
			break
		}
		// 503 too, for a moment: the store is back, but the connections
		// the stall broke are being made again, and a slow machine may
		// take longer than StoreTimeout to make one.
		if r.Err != nil || r.Status != http.StatusConflict && r.Status != http.StatusServiceUnavailable {
			e.T.Fatalf("got %d %v %s, want 409, 503 or 200", r.Status, r.Err, r.Body)
		}
		if time.Since(back) > 2*time.Second {
			e.T.Fatalf("key still held %v after the store came back (lease %v): the failed release was not retried", time.Since(back), lease)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
