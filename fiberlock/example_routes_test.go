package fiberlock_test

import (
	"github.com/gofiber/fiber/v3"
	"github.com/gofiber/fiber/v3/middleware/idempotency"
	"github.com/gofiber/fiber/v3/middleware/recover"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/fiberlock"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/memorystore"
)

// One order creation per user at a time, waiting its turn; one payment per
// user and Idempotency-Key, a retry answered with the first response.
func ExampleNew() {
	locker := core.NewLocker(memorystore.New())
	auth := func(c fiber.Ctx) error { c.Locals("user", "alice"); return c.Next() } // stands in for real authentication
	createOrder := func(c fiber.Ctx) error { return c.SendStatus(fiber.StatusCreated) }
	pay := func(c fiber.Ctx) error { return c.SendStatus(fiber.StatusCreated) }

	app := fiber.New()
	app.Use(recover.New(), auth) // auth does c.Locals("user", userID); recover sits outside the lock
	app.Post("/orders", fiberlock.New(httplock.Config{
		Locker: locker,
		Key:    fiberlock.FromLocals("user"), // the verified user, never a client header
		Mode:   httplock.Wait,
	}), createOrder)
	app.Post("/payments", fiberlock.New(httplock.Config{
		Locker:      locker,
		Key:         httplock.Join(fiberlock.FromLocals("user"), httplock.IdempotencyKey()),
		KeyRequired: true,
		Replay:      &httplock.ReplayConfig{},
	}), pay)
}

// Fiber's idempotency middleware, its keys held across instances.
func ExampleIdempotencyLocker() {
	locker := core.NewLocker(memorystore.New())
	var sharedStorage fiber.Storage // what the instances share: a Redis storage, say
	app := fiber.New()
	app.Use(idempotency.New(idempotency.Config{
		Lock:    fiberlock.IdempotencyLocker(locker),
		Storage: sharedStorage,
	}))
}
