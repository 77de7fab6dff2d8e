package ginlock_test

import (
	"net/http"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/ginlock"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/memorystore"
)

// c.AbortWithStatus sends the status at once: the record has the headers
// as they went out with it, not one set afterwards, which the client
// never got.
func TestReplayHeadersAsSentByWriteHeaderNow(t *testing.T) {
	r := gin.New()
	r.POST("/x", ginlock.New(httplock.Config{
		Locker: core.NewLocker(memorystore.New()), Key: httplock.IdempotencyKey(), Replay: &httplock.ReplayConfig{},
	}), func(c *gin.Context) {
		c.Header("Location", "/orders/1")
		c.AbortWithStatus(http.StatusAccepted)
		c.Header("Location", "/too-late")
		c.Header("Link", "</too-late>")
	})
	first, again := sendKeyed(r).Result(), sendKeyed(r).Result() // Result: the headers as sent
	if again.Header.Get(httplock.HeaderIdempotentReplayed) != "true" || again.StatusCode != http.StatusAccepted {
		t.Fatalf("retry %d replayed=%q, want the 202 replayed", again.StatusCode, again.Header.Get(httplock.HeaderIdempotentReplayed))
	}
	for _, name := range []string{"Location", "Link"} {
		if first.Header.Get(name) != again.Header.Get(name) {
			t.Errorf("%s: %q sent, %q replayed", name, first.Header.Get(name), again.Header.Get(name))
		}
	}
	if got := again.Header.Get("Location"); got != "/orders/1" {
		t.Errorf("replayed Location %q, want /orders/1", got)
	}
}
