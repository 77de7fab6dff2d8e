package fiberlock_test

import (
	"fmt"
	"io"
	"net/http/httptest"
	"sync/atomic"

	"github.com/gofiber/fiber/v3"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/fiberlock"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/memorystore"
)

// One order per user and Idempotency-Key: a retry of the same request gets
// the first answer again, and the handler runs once.
func Example() {
	locker := core.NewLocker(memorystore.New())
	var orders atomic.Int32

	app := fiber.New()
	app.Use(func(c fiber.Ctx) error { // stands in for real authentication
		c.Locals("user", "alice")
		return c.Next()
	})
	app.Post("/orders", fiberlock.New(httplock.Config{
		Locker: locker,
		Key:    httplock.Join(fiberlock.FromLocals("user"), httplock.IdempotencyKey()),
		Replay: &httplock.ReplayConfig{},
	}), func(c fiber.Ctx) error {
		return c.Status(fiber.StatusCreated).SendString(fmt.Sprintf("order %d", orders.Add(1)))
	})

	for range 2 {
		req := httptest.NewRequest("POST", "/orders", nil)
		req.Header.Set("Idempotency-Key", "pay-1")
		resp, err := app.Test(req)
		if err != nil {
			panic(err)
		}
		body, _ := io.ReadAll(resp.Body)
		fmt.Println(resp.StatusCode, string(body), "replayed:", resp.Header.Get(httplock.HeaderIdempotentReplayed) == "true")
	}
	// Output:
	// 201 order 1 replayed: false
	// 201 order 1 replayed: true
}
