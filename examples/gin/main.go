// Command gin is the smallest real Gin server with reqlock: one order
// creation per user at a time, the user taken from what the auth middleware
// verified.
//
//	go run ./examples/gin
//	curl -X POST -H 'Authorization: Bearer alice' http://127.0.0.1:8080/orders
package main

import (
	"log"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/examples/internal/storeenv"
	"github.com/reqlock/reqlock/ginlock"
	"github.com/reqlock/reqlock/httplock"
)

// auth stands in for real authentication: it must verify the credential
// (a session, a signed token) before it trusts the user it names.
func auth(c *gin.Context) {
	user, ok := strings.CutPrefix(c.GetHeader("Authorization"), "Bearer ")
	if !ok || user == "" {
		c.AbortWithStatusJSON(http.StatusUnauthorized, gin.H{"error": "unauthorized"})
		return
	}
	c.Set("user", user)
	c.Next()
}

func createOrder(c *gin.Context) {
	time.Sleep(200 * time.Millisecond) // charge the card, write the order
	c.String(http.StatusCreated, "order created\n")
}

func main() {
	store, which, closeStore, err := storeenv.Open()
	if err != nil {
		log.Fatal(err)
	}
	defer closeStore()

	oneAtATime := ginlock.New(httplock.Config{
		Locker: core.NewLocker(store),
		Key:    ginlock.FromContext("user"), // the verified user, never a client header
	})

	r := gin.New()
	r.Use(gin.Logger(), gin.Recovery(), auth)
	r.POST("/orders", oneAtATime, createOrder)

	log.Printf("listening on 127.0.0.1:8080 (%s)", which)
	log.Fatal(r.Run("127.0.0.1:8080"))
}
