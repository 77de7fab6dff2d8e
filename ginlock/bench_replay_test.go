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

func BenchmarkReplay(b *testing.B) {
	gin.SetMode(gin.ReleaseMode)
	httpcases.BenchReplay(b, func(l *core.Locker, locked bool, replay *httplock.ReplayConfig) http.Handler {
		r := gin.New()
		r.Use(auth)
		chain := []gin.HandlerFunc{func(c *gin.Context) { c.Data(http.StatusCreated, "application/json", httpcases.BenchBody) }}
		if locked {
			chain = append([]gin.HandlerFunc{ginlock.New(httplock.Config{
				Locker: l, Replay: replay,
				Key: httplock.Join(ginlock.FromContext(httpcases.UserKey), httplock.IdempotencyKey()),
			})}, chain...)
		}
		r.POST(httpcases.ColonPath(httpcases.BenchPath), chain...)
		return r
	})
}
