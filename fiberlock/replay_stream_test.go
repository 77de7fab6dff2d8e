package fiberlock_test

import (
	"bufio"
	"net/http"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v3"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/fiberlock"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/internal/httpcases"
	"github.com/reqlock/reqlock/memorystore"
)

// A streamed body (c.SendStreamWriter) never passes the recording writer,
// so it is never recorded: replayed, the retry would get an empty 200 for
// a response its client got in full. Outside the store's unit it goes out
// and the retry runs again; in the unit (pgstore.WithTx; here the memory
// store's units) it cannot commit with a record, so it is answered 500
// not_committed and undone, as any response too long to record is.
func TestReplayStreamNotRecorded(t *testing.T) {
	for _, c := range []struct {
		name       string
		store      *memorystore.Store
		wantStatus int
		wantBody   string
	}{
		{"plain", memorystore.New(), http.StatusOK, "row 1\nrow 2\n"},
		{"in the unit", memorystore.New().WithUnits(), http.StatusInternalServerError, "not_committed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := core.NewLocker(c.store, core.WithLogger(httpcases.Quiet))
			cfg := httplock.Config{Locker: l, Key: httplock.IdempotencyKey(), Logger: httpcases.Quiet, Replay: &httplock.ReplayConfig{}}
			runs := 0
			app := fiber.New()
			app.Post("/report", fiberlock.New(cfg), func(c fiber.Ctx) error {
				runs++
				return c.SendStreamWriter(func(w *bufio.Writer) {
					_, _ = w.WriteString("row 1\nrow 2\n")
				})
			})
			url := serve(t, app)
			status, _, body := send(t, "POST", url+"/report", "Idempotency-Key", "k")
			if status != c.wantStatus || !strings.Contains(body, c.wantBody) {
				t.Fatalf("the first: %d %q, want %d with %q", status, body, c.wantStatus, c.wantBody)
			}
			status, hdr, body := send(t, "POST", url+"/report", "Idempotency-Key", "k")
			if hdr.Get(httplock.HeaderIdempotentReplayed) == "true" || runs != 2 {
				t.Fatalf("the retry of a streamed response: %d %q replayed=%q, %d runs; want a fresh run, not a replay",
					status, body, hdr.Get(httplock.HeaderIdempotentReplayed), runs)
			}
		})
	}
}
