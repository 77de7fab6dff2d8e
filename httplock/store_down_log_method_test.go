package httplock_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/redisstore"
)

// A default scope starts with the client's method. The misconfiguration
// logs already name an invented method "_OTHER"; the store-outage warning
// must do the same, so that no text the client chose reaches a log line.
func TestStoreDownLogNamesInventedMethodOther(t *testing.T) {
	srv := redistest.Start(t)
	client := srv.Client(t)
	var buf syncBuf
	mw := httplock.New(httplock.Config{
		Locker:       core.NewLocker(redisstore.New(client), core.WithLogger(slog.New(slog.DiscardHandler))),
		Key:          httplock.FromHeader("X-Key"),
		StoreTimeout: 200 * time.Millisecond,
		Logger:       slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	mux := http.NewServeMux()
	mux.Handle("/orders", mw(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})))
	web := httptest.NewServer(mux)
	defer web.Close()
	srv.Kill()

	const hostile = "CLIENTTEXT-4f1c9"
	req, _ := http.NewRequest(hostile, web.URL+"/orders", nil)
	req.Header.Set("X-Key", "k")
	resp, err := web.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("store down: got %d, want 503", resp.StatusCode)
	}
	log := buf.String()
	if !strings.Contains(log, "lock store unavailable") {
		t.Fatalf("no outage warning in:\n%s", log)
	}
	if strings.Contains(log, hostile) {
		t.Errorf("the client's invented method reached the log (want _OTHER):\n%s", log)
	}
}
