package snippets

import (
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/echolock"
	"github.com/reqlock/reqlock/httplock"
)

// Echo is the README's Echo v4 section.
func Echo(locker *core.Locker) http.Handler {
	auth, createOrder, pay := echoAuth, echoCreateOrder, echoPay

	e := echo.New()
	e.Use(middleware.Recover(), auth) // auth does c.Set("user", userID)
	e.POST("/orders", createOrder, echolock.New(httplock.Config{
		Locker: locker,
		Key:    echolock.FromContext("user"),
	}))
	e.POST("/payments", pay, echolock.New(httplock.Config{
		Locker:      locker,
		Key:         httplock.Join(echolock.FromContext("user"), httplock.IdempotencyKey()),
		KeyRequired: true,
		Replay:      &httplock.ReplayConfig{},
	}))
	return e
}
