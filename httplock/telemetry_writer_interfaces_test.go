package httplock_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/memorystore"
)

// writerInterfaces names the optional interfaces a handler finds on its
// writer by type assertion, the way handlers pick a code path (sendfile
// through io.ReaderFrom, a websocket upgrade through http.Hijacker).
func writerInterfaces(w http.ResponseWriter) string {
	var has []string
	if _, ok := w.(http.Flusher); ok {
		has = append(has, "Flusher")
	}
	if _, ok := w.(http.Hijacker); ok {
		has = append(has, "Hijacker")
	}
	if _, ok := w.(io.ReaderFrom); ok {
		has = append(has, "ReaderFrom")
	}
	if _, ok := w.(http.CloseNotifier); ok { // deprecated, but handlers still look for it
		has = append(has, "CloseNotifier")
	}
	if _, ok := w.(http.Pusher); ok {
		has = append(has, "Pusher")
	}
	return strings.Join(has, ",")
}

// Turning Config.Telemetry on must not change what a net/http handler finds
// on its writer: it gets the server's writer with the same optional
// interfaces, no more and no fewer, as with telemetry off.
func TestTelemetryKeepsHandlerWriterInterfaces(t *testing.T) {
	telemetry := &core.Telemetry{
		MeterProvider:  sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader())),
		TracerProvider: tracenoop.NewTracerProvider(),
	}
	handler := func(on bool) http.Handler {
		cfg := httplock.Config{Locker: core.NewLocker(memorystore.New()), Key: httplock.FromHeader("X-Key")}
		if on {
			cfg.Telemetry = telemetry
		}
		return httplock.New(cfg)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, writerInterfaces(w))
		}))
	}

	t.Run("server", func(t *testing.T) {
		got := map[bool]string{}
		for _, on := range []bool{false, true} {
			srv := httptest.NewServer(handler(on))
			req, _ := http.NewRequest("POST", srv.URL, nil)
			req.Header.Set("X-Key", "k")
			resp, err := srv.Client().Do(req)
			if err != nil {
				srv.Close()
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			srv.CloseClientConnections()
			srv.Close()
			got[on] = string(b)
		}
		if got[true] != got[false] {
			t.Errorf("handler's writer implements [%s] with telemetry on, [%s] with it off", got[true], got[false])
		}
	})

	t.Run("recorder", func(t *testing.T) {
		got := map[bool]string{}
		for _, on := range []bool{false, true} {
			rec := httptest.NewRecorder()
			req := httptest.NewRequest("POST", "/", nil)
			req.Header.Set("X-Key", "k")
			handler(on).ServeHTTP(rec, req)
			got[on] = rec.Body.String()
		}
		if got[true] != got[false] {
			t.Errorf("handler's writer implements [%s] with telemetry on, [%s] with it off", got[true], got[false])
		}
	})
}
