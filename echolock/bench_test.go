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

func BenchmarkMiddleware(b *testing.B) {
	httpcases.Bench(b, func(l *core.Locker, locked bool) http.Handler {
		e := echo.New()
		e.Use(auth)
		var mw []echo.MiddlewareFunc
		if locked {
			mw = append(mw, echolock.New(httplock.Config{Locker: l, Key: echolock.FromContext(httpcases.UserKey)}))
		}
		e.POST(httpcases.ColonPath(httpcases.BenchPath), func(c echo.Context) error { return c.NoContent(http.StatusOK) }, mw...)
		return e
	})
}
