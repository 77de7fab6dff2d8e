package ginlock_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/gin-gonic/gin"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/ginlock"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/memorystore"
)

// One payment per user at a time; the user comes from the auth middleware,
// not from anything the client sends.
func Example() {
	gin.SetMode(gin.ReleaseMode)
	locker := core.NewLocker(memorystore.New()) // redisstore.New(client) across instances

	authenticate := func(c *gin.Context) {
		users := map[string]string{"Bearer token-of-alice": "alice"}
		user, ok := users[c.GetHeader("Authorization")]
		if !ok {
			c.AbortWithStatus(http.StatusUnauthorized)
			return
		}
		c.Set("user", user)
		c.Next()
	}

	inside, finish := make(chan struct{}), make(chan struct{})
	r := gin.New()
	r.Use(gin.Recovery(), authenticate)
	r.POST("/payments", ginlock.New(httplock.Config{
		Locker: locker,
		Key:    ginlock.FromContext("user"),
	}), func(c *gin.Context) {
		if _, slow := c.GetQuery("slow"); slow {
			close(inside)
			<-finish
		}
		c.String(http.StatusOK, "paid")
	})

	send := func(url string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("POST", url, nil)
		req.Header.Set("Authorization", "Bearer token-of-alice")
		w := httptest.NewRecorder()
		r.ServeHTTP(w, req)
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
