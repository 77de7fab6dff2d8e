package echolock_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/echolock"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/memorystore"
)

// A handler's error is answered by the app's error handler after the
// middleware returns, when the lock and the recording are gone; with
// replay, the middleware renders it while recording, so the retry gets the
// same answer and the handler runs once.
func TestReplayRecordsHandlerError(t *testing.T) {
	runs := 0
	e := echo.New()
	e.POST("/orders", func(echo.Context) error {
		runs++
		return echo.NewHTTPError(http.StatusConflict, "out of stock")
	}, echolock.New(httplock.Config{
		Locker: core.NewLocker(memorystore.New()), Key: httplock.IdempotencyKey(), Replay: &httplock.ReplayConfig{},
	}))
	send := func() *httptest.ResponseRecorder {
		r := httptest.NewRequest("POST", "/orders", nil)
		r.Header.Set(httplock.HeaderIdempotencyKey, `"k1"`)
		w := httptest.NewRecorder()
		e.ServeHTTP(w, r)
		return w
	}
	first, again := send(), send()
	if first.Code != http.StatusConflict || again.Code != first.Code || again.Body.String() != first.Body.String() || runs != 1 {
		t.Fatalf("first %d %q, retry %d %q, %d runs; want the same 409 twice and one run", first.Code, first.Body, again.Code, again.Body, runs)
	}
	if again.Header().Get(httplock.HeaderIdempotentReplayed) != "true" {
		t.Fatal("retry not marked replayed")
	}
}
