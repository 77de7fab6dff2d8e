package fiberlock_test

import (
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

// Under a store that runs the handler in its transaction (pgstore.WithTx;
// here the memory store's units), a handler whose lock is gone before the
// commit has its writes rolled back, so its response, which fasthttp
// holds, must not go out: the client gets 503 not_committed, with the
// outer middleware's headers and none of the handler's. A retry runs.
func TestReplayInUnitNotCommitted(t *testing.T) {
	s := memorystore.New().WithUnits()
	l := core.NewLocker(s, core.WithLogger(httpcases.Quiet))
	cfg := httplock.Config{Locker: l, Key: httplock.IdempotencyKey(), Logger: httpcases.Quiet, Replay: &httplock.ReplayConfig{}}
	skey, _ := l.StoreKey(httplock.LockKey(httplock.DefaultScope("POST", "/pay"), "k"))
	runs := 0
	app := fiber.New()
	app.Post("/pay", func(c fiber.Ctx) error {
		c.Set("X-Outer", "kept")
		return c.Next()
	}, fiberlock.New(cfg), func(c fiber.Ctx) error {
		runs++
		c.Set("Set-Cookie", "session=1")
		if runs == 1 {
			s.Delete(skey) // the lease is gone before the commit
		}
		return c.Status(http.StatusCreated).SendString("paid")
	})
	url := serve(t, app)
	status, hdr, body := send(t, "POST", url+"/pay", "Idempotency-Key", "k")
	if status != http.StatusServiceUnavailable || !strings.Contains(body, "not_committed") ||
		hdr.Get("Set-Cookie") != "" || hdr.Get("X-Outer") != "kept" {
		t.Fatalf("got %d %v %q; want 503 not_committed with the outer header and none of the handler's", status, hdr, body)
	}
	status, _, body = send(t, "POST", url+"/pay", "Idempotency-Key", "k")
	if status != http.StatusCreated || body != "paid" {
		t.Fatalf("the retry: %d %q; want it run", status, body)
	}
	status, hdr, body = send(t, "POST", url+"/pay", "Idempotency-Key", "k")
	if status != http.StatusCreated || body != "paid" || hdr.Get(httplock.HeaderIdempotentReplayed) != "true" || runs != 2 {
		t.Fatalf("the third: %d %q, %d runs; want the retry's replayed", status, body, runs)
	}
}
