// Command echo is the smallest real Echo server with reqlock: one order
// creation per user at a time, the user taken from what the auth middleware
// verified.
//
//	go run ./examples/echo
//	curl -X POST -H 'Authorization: Bearer alice' http://127.0.0.1:8080/orders
package main

import (
	"log"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/echolock"
	"github.com/reqlock/reqlock/examples/internal/storeenv"
	"github.com/reqlock/reqlock/httplock"
)

// auth stands in for real authentication: it must verify the credential
// (a session, a signed token) before it trusts the user it names.
func auth(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		user, ok := strings.CutPrefix(c.Request().Header.Get("Authorization"), "Bearer ")
		if !ok || user == "" {
			return echo.NewHTTPError(http.StatusUnauthorized, "unauthorized")
		}
		c.Set("user", user)
		return next(c)
	}
}

func createOrder(c echo.Context) error {
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
	oneAtATime := echolock.New(httplock.Config{Locker: core.NewLocker(store), Key: echolock.FromContext("user")})

	e := echo.New()
	e.HideBanner = true
	e.Use(middleware.Recover(), auth)
	e.POST("/orders", createOrder, oneAtATime)

	log.Printf("listening on 127.0.0.1:8080 (%s)", which)
	log.Fatal(e.Start("127.0.0.1:8080"))
}
