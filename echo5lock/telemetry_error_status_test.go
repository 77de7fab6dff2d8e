package echo5lock_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v5"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/echo5lock"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/internal/httpcases"
	"github.com/reqlock/reqlock/memorystore"
)

// An Echo handler answers by returning an error as often as by writing:
// the status the client got (418 here) is the one reqlock.http.requests
// must carry, as it does for a handler that writes its status.
func TestTelemetryCountsStatusOfHandlerError(t *testing.T) {
	tel := httpcases.NewTelemetry(t)
	e := echo.New()
	e.POST("/teapot", func(*echo.Context) error {
		return echo.NewHTTPError(http.StatusTeapot, "short and stout")
	}, echo5lock.New(httplock.Config{
		Key:    httplock.FromHeader("X-Key"),
		Locker: core.NewLocker(memorystore.New()), Telemetry: tel.Config(),
	}))
	srv := httptest.NewServer(e)
	defer srv.Close()
	req, _ := http.NewRequest("POST", srv.URL+"/teapot", nil)
	req.Header.Set("X-Key", "k")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTeapot {
		t.Fatalf("got %d, want 418", resp.StatusCode)
	}
	httpcases.Eventually(t, "the request to be counted", func() bool { return tel.Count(t, httplock.OutcomeLocked, -1) == 1 })
	if n := tel.Count(t, httplock.OutcomeLocked, http.StatusTeapot); n != 1 {
		t.Errorf("reqlock.http.requests: streams %+v, want one locked request with status 418",
			tel.Streams(t, httplock.MetricRequests))
	}
}
