// Command echo5 is the smallest real Echo v5 server with reqlock: one order
// creation per user at a time, the user taken from what the auth middleware
// verified.
//
//	go run ./examples/echo5
//	curl -X POST -H 'Authorization: Bearer alice' http://127.0.0.1:8080/orders
package main

import (
	"context"
	"errors"
	"log"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/labstack/echo/v5"
	"github.com/labstack/echo/v5/middleware"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/echo5lock"
	"github.com/reqlock/reqlock/examples/internal/storeenv"
	"github.com/reqlock/reqlock/httplock"
)

// auth stands in for real authentication: it must verify the credential
// (a session, a signed token) before it trusts the user it names.
func auth(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c *echo.Context) error {
		user, ok := strings.CutPrefix(c.Request().Header.Get("Authorization"), "Bearer ")
		if !ok || user == "" {
			return echo.ErrUnauthorized
		}
		c.Set("user", user)
		return next(c)
	}
}

func createOrder(c *echo.Context) error {
	time.Sleep(200 * time.Millisecond) // charge the card, write the order
	return c.String(http.StatusCreated, "order created\n")
}

func main() {
	store, which, closeStore, err := storeenv.Open()
	if err != nil {
		log.Fatal(err)
	}
	defer closeStore()

	// The verified user, never a client header.
	oneAtATime := echo5lock.New(httplock.Config{Locker: core.NewLocker(store), Key: echo5lock.FromContext("user")})

	e := echo.New()
	e.HTTPErrorHandler = echo.ProblemDetailsHTTPErrorHandler(false) // your own errors as application/problem+json too
	e.Use(middleware.Recover(), auth)
	e.POST("/orders", createOrder, oneAtATime)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	log.Printf("listening on 127.0.0.1:8080 (%s)", which)
	sc := echo.StartConfig{Address: "127.0.0.1:8080", HideBanner: true, HidePort: true}
	if err := sc.Start(ctx, e); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Print(err)
	}
}
