package echo5lock_test

import (
	"net/http"
	"testing"

	"github.com/labstack/echo/v5"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/echo5lock"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/internal/httpcases"
)

func BenchmarkReplay(b *testing.B) {
	httpcases.BenchReplay(b, func(l *core.Locker, locked bool, replay *httplock.ReplayConfig) http.Handler {
		e := echo.New()
		e.Use(auth)
		var mw []echo.MiddlewareFunc
		if locked {
			mw = append(mw, echo5lock.New(httplock.Config{
				Key:    httplock.Join(echo5lock.FromContext(httpcases.UserKey), httplock.IdempotencyKey()),
				Locker: l, Replay: replay,
			}))
		}
		e.POST(httpcases.ColonPath(httpcases.BenchPath), func(c *echo.Context) error {
			return c.Blob(http.StatusCreated, "application/json", httpcases.BenchBody)
		}, mw...)
		return e
	})
}
