package snippets

import (
	"net/http"

	"github.com/labstack/echo/v5"
	"github.com/labstack/echo/v5/middleware"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/echo5lock"
	"github.com/reqlock/reqlock/httplock"
)

// Echo5 is the README's Echo v5 section.
func Echo5(locker *core.Locker) http.Handler {
	auth, createOrder, pay := echo5Auth, echo5CreateOrder, echo5Pay

	e := echo.New()
	e.HTTPErrorHandler = echo.ProblemDetailsHTTPErrorHandler(false) // rejections as problem+json
	e.Use(middleware.Recover(), auth)                               // auth does c.Set("user", userID)
	e.POST("/orders", createOrder, echo5lock.New(httplock.Config{
		Locker: locker,
		Key:    echo5lock.FromContext("user"),
	}))
	e.POST("/payments", pay, echo5lock.New(httplock.Config{
		Locker:      locker,
		Key:         httplock.Join(echo5lock.FromContext("user"), httplock.IdempotencyKey()),
		KeyRequired: true,
		Replay:      &httplock.ReplayConfig{},
	}))
	return e
}
