package echolock_test

import (
	"net/http"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/echolock"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/internal/httpcases"
)

func BenchmarkReplay(b *testing.B) {
	httpcases.BenchReplay(b, func(l *core.Locker, locked bool, replay *httplock.ReplayConfig) http.Handler {
		e := echo.New()
		e.Use(auth)
		var mw []echo.MiddlewareFunc
		if locked {
			mw = append(mw, echolock.New(httplock.Config{
				Locker: l, Replay: replay,
				Key: httplock.Join(echolock.FromContext(httpcases.UserKey), httplock.IdempotencyKey()),
			}))
		}
		e.POST(httpcases.ColonPath(httpcases.BenchPath), func(c echo.Context) error {
			return c.Blob(http.StatusCreated, "application/json", httpcases.BenchBody)
		}, mw...)
		return e
	})
}
