package fiberlock_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/gofiber/fiber/v3"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/fiberlock"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/internal/httpcases"
	"github.com/reqlock/reqlock/memorystore"
)

func TestNewPanicsOnBadConfig(t *testing.T) {
	httpcases.CheckConfigPanics(t, "fiberlock.New: ", func(cfg httplock.Config) { fiberlock.New(cfg) })
}

func locker() *core.Locker {
	return core.NewLocker(memorystore.New(), core.WithLogger(httpcases.Quiet))
}

func send(t *testing.T, method, url string, hdr ...string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Add(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

func problemCode(body string) string {
	var p httplock.Problem
	_ = json.Unmarshal([]byte(body), &p)
	return p.Code
}

// Fiber runs app.Use middleware before it matches a route: there the
// middleware cannot tell routes apart and answers 500, unless Config.Scope
// names the lock space.
func TestUseNeedsScope(t *testing.T) {
	l := locker()
	app := fiber.New()
	app.Use("/a", fiberlock.New(httplock.Config{Locker: l, Key: httplock.FromHeader("X-Key"), Logger: httpcases.Quiet}))
	app.Use("/b", fiberlock.New(httplock.Config{Locker: l, Key: httplock.FromHeader("X-Key"), Scope: "b"}))
	ok := func(c fiber.Ctx) error { return c.SendStatus(http.StatusOK) }
	app.Post("/a/orders", ok)
	app.Post("/b/orders", ok)
	url := serve(t, app)
	if status, _, body := send(t, "POST", url+"/a/orders", "X-Key", "k"); status != 500 || problemCode(body) != "route_unknown" {
		t.Fatalf("under app.Use without Scope: %d %s", status, body)
	}
	if status, _, body := send(t, "POST", url+"/b/orders", "X-Key", "k"); status != 200 {
		t.Fatalf("under app.Use with Scope: %d %s", status, body)
	}
}

// httplock.FromPathValue reads net/http's wildcards, which a Fiber request
// has none of: the server's mistake, 500, not a request without a key.
func TestPathValueIsMisconfigured(t *testing.T) {
	app := fiber.New()
	app.Post("/orders/:id", fiberlock.New(httplock.Config{Locker: locker(), Key: httplock.FromPathValue("id"), Logger: httpcases.Quiet}),
		func(c fiber.Ctx) error { return c.SendStatus(http.StatusOK) })
	if status, _, body := send(t, "POST", serve(t, app)+"/orders/1"); status != 500 || problemCode(body) != "key_misconfigured" {
		t.Fatalf("got %d %s, want 500 key_misconfigured", status, body)
	}
}

// A handler's error is Fiber's to render. With replay on, the middleware
// renders it (App.ErrorHandler) so that the record holds what the client got.
func TestHandlerErrorReplayed(t *testing.T) {
	for _, replay := range []bool{false, true} {
		var runs atomic.Int32
		cfg := httplock.Config{Locker: locker(), Key: httplock.IdempotencyKey()}
		if replay {
			cfg.Replay = &httplock.ReplayConfig{}
		}
		app := fiber.New()
		app.Post("/orders", fiberlock.New(cfg), func(c fiber.Ctx) error {
			runs.Add(1)
			return fiber.NewError(http.StatusBadRequest, "no such item")
		})
		url := serve(t, app)
		for i := range 2 {
			status, hdr, body := send(t, "POST", url+"/orders", "Idempotency-Key", "k")
			if status != 400 || body != "no such item" {
				t.Fatalf("replay %v: %d %q", replay, status, body)
			}
			if got, want := hdr.Get(httplock.HeaderIdempotentReplayed) == "true", replay && i == 1; got != want {
				t.Fatalf("replay %v, request %d: replayed %v", replay, i+1, got)
			}
		}
		want := int32(2)
		if replay {
			want = 1
		}
		if n := runs.Load(); n != want {
			t.Errorf("replay %v: the handler ran %d times, want %d", replay, n, want)
		}
	}
}

// The lock reaches the handler on c.Context() (LockFrom), and the context
// is Fiber's own again once the middleware returns.
func TestLockOnContext(t *testing.T) {
	var after context.Context
	app := fiber.New()
	app.Use(func(c fiber.Ctx) error {
		err := c.Next()
		after = c.Context()
		return err
	})
	app.Post("/orders", fiberlock.New(httplock.Config{Locker: locker(), Key: httplock.FromHeader("X-Key"), Scope: "s"}),
		func(c fiber.Ctx) error {
			lk, ok := fiberlock.LockFrom(c)
			if !ok || lk.Key() != httplock.LockKey("s", "k") {
				return c.SendStatus(http.StatusInternalServerError)
			}
			return c.SendStatus(http.StatusOK)
		})
	if status, _, body := send(t, "POST", serve(t, app)+"/orders", "X-Key", "k"); status != 200 {
		t.Fatalf("got %d %s", status, body)
	}
	if _, ok := core.FromContext(after); ok {
		t.Fatal("the lock's context outlives the middleware")
	}
}
