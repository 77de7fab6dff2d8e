package echo5lock_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v5"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/echo5lock"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/memorystore"
)

// failingReader yields its bytes, then fails: an upstream that breaks
// half-way through a body the handler streams with c.Stream.
type failingReader struct{ r io.Reader }

func (f *failingReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err == io.EOF {
		return n, errors.New("upstream connection reset")
	}
	return n, err
}

// A handler that fails after its response was committed can only return
// its error: what the client got is cut short, so it is not recorded, as
// for a panic, and the retry runs the handler.
func TestReplayNotRecordedAfterCommittedError(t *testing.T) {
	runs := 0
	e := echo.New()
	e.POST("/export", func(c *echo.Context) error {
		runs++
		return c.Stream(http.StatusOK, "application/json", &failingReader{strings.NewReader(`{"rows":[1,2,3`)})
	}, echo5lock.New(httplock.Config{
		Key:    httplock.IdempotencyKey(),
		Locker: core.NewLocker(memorystore.New()), Replay: &httplock.ReplayConfig{},
	}))
	send := func() *httptest.ResponseRecorder {
		r := httptest.NewRequest("POST", "/export", nil)
		r.Header.Set(httplock.HeaderIdempotencyKey, `"k1"`)
		w := httptest.NewRecorder()
		e.ServeHTTP(w, r)
		return w
	}
	first, again := send(), send()
	if again.Header().Get(httplock.HeaderIdempotentReplayed) != "" || runs != 2 {
		t.Errorf("first %d %q; retry %d %q replayed=%q; %d runs, want the retry run afresh",
			first.Code, first.Body, again.Code, again.Body, again.Header().Get(httplock.HeaderIdempotentReplayed), runs)
	}
}
