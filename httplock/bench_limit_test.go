package httplock_test

import (
	"net/http"
	"testing"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/internal/httpcases"
)

func BenchmarkLimit(b *testing.B) {
	httpcases.BenchLimit(b, func(l *core.Locker, limit int) http.Handler {
		h := httplock.New(httplock.Config{Locker: l, Limit: limit, Key: httplock.FromContext(httpcases.ValueKey(httpcases.UserKey))})(
			http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
		mux := http.NewServeMux()
		mux.Handle("POST "+httpcases.BenchPath, httpcases.WithUser(h))
		return mux
	})
}
