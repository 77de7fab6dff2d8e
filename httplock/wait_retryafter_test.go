package httplock_test

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/memorystore"
)

// Retry-After is never more than the holder's remaining lease rounded up,
// for a Wait-mode request that gives up after MaxWait too: the lease as it
// is then, not as the waiter's first attempt saw it (the holder, 3 s lease
// and no watchdog, has under 1 s left by then).
func TestWaitRetryAfterWithinHolderTTL(t *testing.T) {
	lk := core.NewLocker(memorystore.New(), core.WithTTL(3*time.Second), core.WithoutWatchdog())
	entered := make(chan struct{}, 1)
	release := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Hold") != "" {
			entered <- struct{}{}
			<-release
		}
	})
	mw := httplock.New(httplock.Config{Locker: lk, Key: httplock.FromHeader("X-Key"), Mode: httplock.Wait,
		MaxWait: 2200 * time.Millisecond, RetryAfter: 10 * time.Second, Scope: "orders"})
	srv := httptest.NewServer(mw(h))
	defer srv.Close()
	get := func(hold bool) *http.Response {
		req, _ := http.NewRequest("GET", srv.URL, nil)
		req.Header.Set("X-Key", "k")
		if hold {
			req.Header.Set("X-Hold", "1")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
			return nil
		}
		resp.Body.Close()
		return resp
	}
	holder := make(chan struct{})
	go func() { defer close(holder); get(true) }()
	<-entered
	acquired := time.Now()
	var wg sync.WaitGroup
	got := make([]string, 3)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r := get(false); r != nil {
				got[i] = strconv.Itoa(r.StatusCode) + " Retry-After=" + r.Header.Get("Retry-After")
			}
		}()
	}
	wg.Wait()
	left := 3*time.Second - time.Since(acquired)
	close(release)
	<-holder
	maxRA := int((left + time.Second - 1) / time.Second)
	for _, g := range got {
		if g != "409 Retry-After="+strconv.Itoa(maxRA) && g != "409 Retry-After=1" {
			t.Errorf("waiter got %q; holder's lease had %v left (Retry-After must be ≤ %d)", g, left.Round(time.Millisecond), maxRA)
		}
	}
}
