package httplock_test

import (
	"net/http"
	"testing"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/internal/httpcases"
)

func BenchmarkMiddleware(b *testing.B) {
	httpcases.Bench(b, func(l *core.Locker, locked bool) http.Handler {
		var h http.Handler = http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
		if locked {
			h = httplock.New(httplock.Config{Locker: l, Key: httplock.FromContext(httpcases.ValueKey(httpcases.UserKey))})(h)
		}
		mux := http.NewServeMux()
		mux.Handle("POST "+httpcases.BenchPath, httpcases.WithUser(h))
		return mux
	})
}
