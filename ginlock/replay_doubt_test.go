package ginlock_test

import (
	"errors"
	"net/http"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/ginlock"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/memorystore"
)

// A handler that fails the Gin way, c.AbortWithError(503, err), answered
// with the lock held all along: its run is over, not in doubt, as a 503
// written with c.JSON or an Echo handler's returned error is. Under
// RefuseInDoubt its retry must run, not get 409 in_doubt until the
// retention ends.
func TestReplayGinErrorIsNoDoubt(t *testing.T) {
	runs := 0
	r := gin.New()
	r.POST("/x", ginlock.New(httplock.Config{
		Locker: core.NewLocker(memorystore.New()), Key: httplock.IdempotencyKey(),
		Replay: &httplock.ReplayConfig{InDoubt: core.RefuseInDoubt},
	}), func(c *gin.Context) {
		runs++
		if runs == 1 {
			_ = c.AbortWithError(http.StatusServiceUnavailable, errors.New("payment provider busy"))
			return
		}
		c.String(http.StatusCreated, "paid")
	})
	first, again := sendKeyed(r), sendKeyed(r)
	if first.Code != http.StatusServiceUnavailable || again.Code != http.StatusCreated || runs != 2 {
		t.Fatalf("first %d %q; retry %d %q; %d runs; want 503, then a run: 201",
			first.Code, first.Body, again.Code, again.Body, runs)
	}
}
