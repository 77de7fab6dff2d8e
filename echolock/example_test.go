package echolock_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/echolock"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/memorystore"
)

// One payment per user at a time; the user comes from the auth middleware,
// not from anything the client sends.
func Example() {
	locker := core.NewLocker(memorystore.New()) // redisstore.New(client) across instances

	authenticate := func(next echo.HandlerFunc) echo.HandlerFunc {
		users := map[string]string{"Bearer token-of-alice": "alice"}
		return func(c echo.Context) error {
			user, ok := users[c.Request().Header.Get("Authorization")]
			if !ok {
				return echo.ErrUnauthorized
			}
			c.Set("user", user)
			return next(c)
		}
	}

	e := echo.New()
	e.Use(middleware.Recover(), authenticate)

	inside, finish := make(chan struct{}), make(chan struct{})
	e.POST("/payments", func(c echo.Context) error {
		if c.QueryParams().Has("slow") {
			close(inside)
			<-finish
		}
		return c.String(http.StatusOK, "paid")
	}, echolock.New(httplock.Config{Locker: locker, Key: echolock.FromContext("user")}))

	send := func(url string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("POST", url, nil)
		req.Header.Set("Authorization", "Bearer token-of-alice")
		w := httptest.NewRecorder()
		e.ServeHTTP(w, req)
		return w
	}

	first := make(chan *httptest.ResponseRecorder)
	go func() { first <- send("/payments?slow") }()
	<-inside

	dup := send("/payments")
	fmt.Println(dup.Code, dup.Header().Get("Retry-After"), dup.Header().Get("Content-Type"))

	close(finish)
	fmt.Println((<-first).Code)
	fmt.Println(send("/payments").Code)
	// Output:
	// 409 1 application/problem+json
	// 200
	// 200
}
