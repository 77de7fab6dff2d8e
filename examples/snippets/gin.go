package snippets

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/ginlock"
	"github.com/reqlock/reqlock/httplock"
)

// Gin is the README's Gin section.
func Gin(locker *core.Locker) http.Handler {
	auth, createOrder, pay := ginAuth, ginCreateOrder, ginPay

	r := gin.New()
	r.Use(gin.Recovery(), auth) // auth does c.Set("user", userID); Recovery sits outside the lock
	r.POST("/orders", ginlock.New(httplock.Config{
		Locker: locker,
		Key:    ginlock.FromContext("user"),
		Mode:   httplock.Wait,
	}), createOrder)
	r.POST("/payments", ginlock.New(httplock.Config{
		Locker:      locker,
		Key:         httplock.Join(ginlock.FromContext("user"), httplock.IdempotencyKey()),
		KeyRequired: true,
		Replay:      &httplock.ReplayConfig{},
	}), pay)
	return r
}
