package snippets

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/gin-gonic/gin"
	echo4 "github.com/labstack/echo/v4"
	echo5 "github.com/labstack/echo/v5"
)

// The handlers answer 201 with a body naming what they made, numbered, so a
// replayed answer tells itself apart from a second run.
var made atomic.Int64

func next(what string) string { return fmt.Sprintf("%s_%d\n", what, made.Add(1)) }

// userKey is the context key net/http's auth puts the verified user under.
type userKey struct{}

// bearer stands in for real authentication: a real one verifies a session or
// a signed token before it trusts the user it names.
func bearer(h string) (string, bool) {
	user, ok := strings.CutPrefix(h, "Bearer ")
	return user, ok && user != ""
}

func auth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, ok := bearer(r.Header.Get("Authorization"))
		if !ok {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), userKey{}, user)))
	})
}

func createOrder(w http.ResponseWriter, r *http.Request) {
	w.WriteHeader(http.StatusCreated)
	_, _ = w.Write([]byte(next("ord")))
}

func pay(w http.ResponseWriter, r *http.Request) {
	w.WriteHeader(http.StatusCreated)
	_, _ = w.Write([]byte(next("pay")))
}

func ginAuth(c *gin.Context) {
	user, ok := bearer(c.GetHeader("Authorization"))
	if !ok {
		c.AbortWithStatus(http.StatusUnauthorized)
		return
	}
	c.Set("user", user)
	c.Next()
}

func ginCreateOrder(c *gin.Context) { c.String(http.StatusCreated, next("ord")) }
func ginPay(c *gin.Context)         { c.String(http.StatusCreated, next("pay")) }

func echoAuth(next echo4.HandlerFunc) echo4.HandlerFunc {
	return func(c echo4.Context) error {
		user, ok := bearer(c.Request().Header.Get("Authorization"))
		if !ok {
			return echo4.ErrUnauthorized
		}
		c.Set("user", user)
		return next(c)
	}
}

func echoCreateOrder(c echo4.Context) error { return c.String(http.StatusCreated, next("ord")) }
func echoPay(c echo4.Context) error         { return c.String(http.StatusCreated, next("pay")) }

func echo5Auth(next echo5.HandlerFunc) echo5.HandlerFunc {
	return func(c *echo5.Context) error {
		user, ok := bearer(c.Request().Header.Get("Authorization"))
		if !ok {
			return echo5.ErrUnauthorized
		}
		c.Set("user", user)
		return next(c)
	}
}

func echo5CreateOrder(c *echo5.Context) error { return c.String(http.StatusCreated, next("ord")) }
func echo5Pay(c *echo5.Context) error         { return c.String(http.StatusCreated, next("pay")) }
