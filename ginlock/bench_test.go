package ginlock_test

import (
	"net/http"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/ginlock"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/internal/httpcases"
)

func BenchmarkMiddleware(b *testing.B) {
	gin.SetMode(gin.ReleaseMode)
	httpcases.Bench(b, func(l *core.Locker, locked bool) http.Handler {
		r := gin.New()
		r.Use(auth)
		chain := []gin.HandlerFunc{func(c *gin.Context) { c.Status(http.StatusOK) }}
		if locked {
			chain = append([]gin.HandlerFunc{ginlock.New(httplock.Config{Locker: l, Key: ginlock.FromContext(httpcases.UserKey)})}, chain...)
		}
		r.POST(httpcases.ColonPath(httpcases.BenchPath), chain...)
		return r
	})
}
