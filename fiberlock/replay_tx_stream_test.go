package fiberlock_test

import (
	"bufio"
	"net/http"
	"testing"

	"github.com/gofiber/fiber/v3"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/fiberlock"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/internal/httpcases"
	"github.com/reqlock/reqlock/memorystore"
)

// A streamed body (c.SendStreamWriter) is not recorded, in the store's
// unit too (pgstore.WithTx; here the memory store's units): its bytes
// never pass the recording writer. Recorded all the same, its retry is
// replayed an empty 200 for a response the client got in full.
func TestReplayInUnitStreamNotRecorded(t *testing.T) {
	l := core.NewLocker(memorystore.New().WithUnits(), core.WithLogger(httpcases.Quiet))
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
	if status != http.StatusOK || body != "row 1\nrow 2\n" {
		t.Fatalf("the first: %d %q", status, body)
	}
	status, hdr, body := send(t, "POST", url+"/report", "Idempotency-Key", "k")
	if hdr.Get(httplock.HeaderIdempotentReplayed) == "true" || runs != 2 {
		t.Fatalf("the retry of a streamed response: %d %q replayed=%q, %d runs; want a fresh run, not a replay",
			status, body, hdr.Get(httplock.HeaderIdempotentReplayed), runs)
	}
}
