package frameworks_test

import (
	"io"
	"net/http"
	"sync"
	"testing"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/internal/httpcases"
	"github.com/reqlock/reqlock/internal/httpcases/frameworks"
	"github.com/reqlock/reqlock/memorystore"
)

// TestServeLocksPerUser checks each framework's wiring on its own: the
// stand-in auth puts the user where the key extractor looks, so a second
// request of the same user while the first runs is turned away, and
// another user's is not.
func TestServeLocksPerUser(t *testing.T) {
	for _, fw := range frameworks.All {
		t.Run(fw.Name, func(t *testing.T) {
			l := core.NewLocker(memorystore.New())
			inside, release := make(chan struct{}), make(chan struct{})
			var once sync.Once
			url := fw.Serve(t, []httpcases.Route{{
				Method: http.MethodPost,
				Path:   "/orders/{id}",
				Lock:   httplock.Config{Locker: l, Mode: httplock.Reject},
				Key:    httpcases.KeySource{Kind: httpcases.FromUser},
				Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.Header.Get(httpcases.UserHeader) == "ann" {
						once.Do(func() { close(inside) })
						<-release
					}
					w.WriteHeader(http.StatusOK)
				}),
			}})
			post := func(user string) int {
				req, _ := http.NewRequest(http.MethodPost, url+"/orders/1", nil)
				req.Header.Set(httpcases.UserHeader, user)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Error(err)
					return 0
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
				return resp.StatusCode
			}
			first := make(chan int, 1)
			go func() { first <- post("ann") }()
			<-inside
			if got := post("ann"); got != http.StatusConflict {
				t.Errorf("second request of the same user: %d, want 409", got)
			}
			if got := post("bob"); got != http.StatusOK {
				t.Errorf("another user's request: %d, want 200", got)
			}
			close(release)
			if got := <-first; got != http.StatusOK {
				t.Errorf("first request: %d, want 200", got)
			}
			http.DefaultClient.CloseIdleConnections()
		})
	}
}
