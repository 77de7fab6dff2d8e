package httplock_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/redisstore"
)

// Two instances of one service (a Locker each, one Redis), one user, steady
// load on both in Wait mode: neither instance starves, and no request waits
// past MaxWait while the other instance's requests keep passing.
func TestTwoInstancesServeOneUserInTurn(t *testing.T) {
	srv := redistest.Start(t)
	instance := func() *httptest.Server {
		c := redis.NewClient(redistest.ClientOptions(srv.Addr))
		t.Cleanup(func() { _ = c.Close() })
		mw := httplock.New(httplock.Config{
			Locker:  core.NewLocker(redisstore.New(c)),
			Key:     httplock.FromHeader("X-User"),
			Scope:   "orders",
			Mode:    httplock.Wait,
			MaxWait: 3 * time.Second,
		})
		s := httptest.NewServer(mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(5 * time.Millisecond)
		})))
		t.Cleanup(s.Close)
		return s
	}
	servers := []*httptest.Server{instance(), instance()}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var mu sync.Mutex
	served := make([]int, len(servers))
	var other []int
	var wg sync.WaitGroup
	for i, s := range servers {
		for range 3 { // three clients of the same user on each instance
			wg.Go(func() {
				for ctx.Err() == nil {
					req, _ := http.NewRequest(http.MethodPost, s.URL, nil)
					req.Header.Set("X-User", "alice")
					resp, err := s.Client().Do(req)
					if err != nil {
						t.Error(err)
						return
					}
					_ = resp.Body.Close()
					mu.Lock()
					if resp.StatusCode == http.StatusOK {
						served[i]++
					} else {
						other = append(other, resp.StatusCode)
					}
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	total := served[0] + served[1]
	t.Logf("served per instance %v; other answers %v", served, other)
	if len(other) > 0 {
		t.Fatalf("%d requests were not served (%v): someone waited past MaxWait", len(other), other)
	}
	for i, n := range served {
		if n*10 < total*3 {
			t.Fatalf("instance %d served %d of %d requests: starved", i, n, total)
		}
	}
}
