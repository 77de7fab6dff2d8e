package ginlock_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/ginlock"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/memorystore"
)

// failingReader yields its bytes, then fails: an upstream that breaks
// half-way through a body the handler passes on.
type failingReader struct{ r io.Reader }

func (f *failingReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err == io.EOF {
		return n, errors.New("upstream connection reset")
	}
	return n, err
}

func sendKeyed(r http.Handler) *httptest.ResponseRecorder {
	req := httptest.NewRequest("POST", "/x", nil)
	req.Header.Set(httplock.HeaderIdempotencyKey, `"k1"`)
	w := httptest.NewRecorder()
	r.ServeHTTP(w, req)
	return w
}

// A render that broke off half-way (c.DataFromReader over a reader that
// fails) leaves a cut-short 200 and the failure in c.Errors: it is not
// recorded, and the retry runs the handler.
func TestReplayNotRecordedAfterRenderError(t *testing.T) {
	runs := 0
	r := gin.New()
	r.POST("/x", ginlock.New(httplock.Config{
		Locker: core.NewLocker(memorystore.New()), Key: httplock.IdempotencyKey(), Replay: &httplock.ReplayConfig{},
	}), func(c *gin.Context) {
		runs++
		c.DataFromReader(http.StatusOK, -1, "application/json", &failingReader{strings.NewReader(`{"rows":[1,2,3`)}, nil)
	})
	first, again := sendKeyed(r), sendKeyed(r)
	if again.Header().Get(httplock.HeaderIdempotentReplayed) != "" || runs != 2 {
		t.Errorf("first %d %q; retry %d %q replayed=%q; %d runs, want the retry run afresh",
			first.Code, first.Body, again.Code, again.Body, again.Header().Get(httplock.HeaderIdempotentReplayed), runs)
	}
}

// An error a handler leaves in c.Errors for an outer middleware to render
// is answered after the lock is gone: what passed through the lock was an
// empty 200, not the answer. It is not recorded.
func TestReplayNotRecordedWithGinErrors(t *testing.T) {
	runs := 0
	r := gin.New()
	r.Use(func(c *gin.Context) {
		c.Next()
		if err := c.Errors.Last(); err != nil {
			c.JSON(http.StatusConflict, gin.H{"error": err.Error()})
		}
	})
	r.POST("/x", ginlock.New(httplock.Config{
		Locker: core.NewLocker(memorystore.New()), Key: httplock.IdempotencyKey(), Replay: &httplock.ReplayConfig{},
	}), func(c *gin.Context) {
		runs++
		_ = c.Error(errors.New("out of stock"))
	})
	first, again := sendKeyed(r), sendKeyed(r)
	if first.Code != http.StatusConflict || again.Code != http.StatusConflict || again.Header().Get(httplock.HeaderIdempotentReplayed) != "" || runs != 2 {
		t.Errorf("first %d %q; retry %d %q replayed=%q; %d runs, want 409 twice and two runs",
			first.Code, first.Body, again.Code, again.Body, again.Header().Get(httplock.HeaderIdempotentReplayed), runs)
	}
}
