package httplock_test

import (
	"net/http"
	"testing"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/internal/httpcases"
)

func BenchmarkReplay(b *testing.B) {
	httpcases.BenchReplay(b, func(l *core.Locker, locked bool, replay *httplock.ReplayConfig) http.Handler {
		var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write(httpcases.BenchBody)
		})
		if locked {
			h = httplock.New(httplock.Config{
				Locker: l, Replay: replay,
				Key: httplock.Join(httplock.FromContext(httpcases.ValueKey(httpcases.UserKey)), httplock.IdempotencyKey()),
			})(h)
		}
		mux := http.NewServeMux()
		mux.Handle("POST "+httpcases.BenchPath, httpcases.WithUser(h))
		return mux
	})
}
