package ginlock_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/ginlock"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/memorystore"
)

// Gin holds the status back until the body starts, and the last
// c.Status before it wins: the record has the status Gin sent, and a
// replay aborts the chain, so no later handler writes after it.
func TestReplayGinStatus(t *testing.T) {
	runs, after := 0, 0
	r := gin.New()
	r.POST("/orders", ginlock.New(httplock.Config{
		Locker: core.NewLocker(memorystore.New()), Key: httplock.IdempotencyKey(), Replay: &httplock.ReplayConfig{},
	}), func(c *gin.Context) {
		runs++
		c.Status(http.StatusAccepted)
		c.JSON(http.StatusCreated, gin.H{"order": runs})
	}, func(*gin.Context) { after++ })
	send := func() *httptest.ResponseRecorder {
		req := httptest.NewRequest("POST", "/orders", nil)
		req.Header.Set(httplock.HeaderIdempotencyKey, `"k1"`)
		w := httptest.NewRecorder()
		r.ServeHTTP(w, req)
		return w
	}
	first, again := send(), send()
	if first.Code != http.StatusCreated || again.Code != first.Code || again.Body.String() != first.Body.String() || runs != 1 || after != 1 {
		t.Fatalf("first %d %q, retry %d %q, %d runs, %d after; want the same 201 twice, one run, one after", first.Code, first.Body, again.Code, again.Body, runs, after)
	}
	if again.Header().Get("Content-Type") != first.Header().Get("Content-Type") || again.Header().Get(httplock.HeaderIdempotentReplayed) != "true" {
		t.Fatalf("replay headers %v", again.Header())
	}
}
