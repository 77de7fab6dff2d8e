// Command fiber is the smallest real Fiber server with reqlock: one order
// creation per user at a time, the user taken from what the auth middleware
// verified, and a payment route that answers a retried Idempotency-Key
// with the first response instead of charging twice.
//
//	go run .   (in examples/fiber)
//	curl -X POST -H 'Authorization: Bearer alice' http://127.0.0.1:8080/orders
//	curl -X POST -H 'Authorization: Bearer alice' -H 'Idempotency-Key: pay-1' http://127.0.0.1:8080/payments
package main

import (
	"fmt"
	"log"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v3"
	"github.com/gofiber/fiber/v3/middleware/recover"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/examples/internal/storeenv"
	"github.com/reqlock/reqlock/fiberlock"
	"github.com/reqlock/reqlock/httplock"
)

// auth stands in for real authentication: it must verify the credential
// (a session, a signed token) before it trusts the user it names.
func auth(c fiber.Ctx) error {
	user, ok := strings.CutPrefix(c.Get("Authorization"), "Bearer ")
	if !ok || user == "" {
		return fiber.ErrUnauthorized
	}
	c.Locals("user", strings.Clone(user)) // Fiber's strings point into its buffers
	return c.Next()
}

var payments atomic.Int64

func createOrder(c fiber.Ctx) error {
	time.Sleep(200 * time.Millisecond) // charge the card, write the order
	return c.Status(fiber.StatusCreated).SendString("order created\n")
}

func pay(c fiber.Ctx) error {
	time.Sleep(200 * time.Millisecond)
	return c.Status(fiber.StatusCreated).SendString(fmt.Sprintf("payment %d\n", payments.Add(1)))
}

func main() {
	store, which, closeStore, err := storeenv.Open()
	if err != nil {
		log.Fatal(err)
	}
	defer closeStore()
	locker := core.NewLocker(store)

	app := fiber.New()
	app.Use(recover.New(), auth)
	app.Post("/orders", fiberlock.New(httplock.Config{
		Locker: locker,
		Key:    fiberlock.FromLocals("user"), // the verified user, never a client header
	}), createOrder)
	app.Post("/payments", fiberlock.New(httplock.Config{
		Locker: locker,
		// The user joined with the key: one client's key never reaches
		// another's response.
		Key:         httplock.Join(fiberlock.FromLocals("user"), httplock.IdempotencyKey()),
		KeyRequired: true,
		Replay:      &httplock.ReplayConfig{},
	}), pay)

	log.Printf("listening on 127.0.0.1:8080 (%s)", which)
	log.Fatal(app.Listen("127.0.0.1:8080", fiber.ListenConfig{DisableStartupMessage: true}))
}
