package httplock_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/memorystore"
)

type userIDKey struct{}

// auth stands in for real authentication: it puts the verified user on the
// request's context, where the lock's key comes from.
func auth(next http.Handler) http.Handler {
	users := map[string]string{"Bearer token-of-alice": "alice"}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, ok := users[r.Header.Get("Authorization")]
		if !ok {
			http.Error(w, "who are you?", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), userIDKey{}, user)))
	})
}

// One payment per user at a time: a double-submitted payment gets 409 while
// the first is still running.
func Example() {
	locker := core.NewLocker(memorystore.New()) // redisstore.New(client) across instances
	lock := httplock.New(httplock.Config{
		Locker: locker,
		Key:    httplock.FromContext(userIDKey{}),
	})

	inside, finish := make(chan struct{}), make(chan struct{})
	pay := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Has("slow") {
			close(inside)
			<-finish
		}
		fmt.Fprintln(w, "paid")
	})
	mux := http.NewServeMux()
	mux.Handle("POST /payments", auth(lock(pay)))

	send := func(url string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("POST", url, nil)
		r.Header.Set("Authorization", "Bearer token-of-alice")
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, r)
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

func ExampleParseIdempotencyKey() {
	key, err := httplock.ParseIdempotencyKey(`"8e03978e-40d5-43e8-bc93-6894a57f9324"`)
	fmt.Println(key, err)
	_, err = httplock.ParseIdempotencyKey(`8e03978e-40d5-43e8-bc93-6894a57f9324`)
	fmt.Println(err != nil)
	// Output:
	// 8e03978e-40d5-43e8-bc93-6894a57f9324 <nil>
	// true
}

// Both forms of a key a client may send are the same key; the strict
// parse takes the draft's quoted form only.
func ExampleParseIdempotencyKeyLenient() {
	plain, _ := httplock.ParseIdempotencyKeyLenient(`pay-1`)
	quoted, _ := httplock.ParseIdempotencyKeyLenient(`"pay-1"`)
	fmt.Println(plain, quoted)
	// Output:
	// pay-1 pay-1
}

// The key a route keyed with Join locks on, spelled out: what to give
// Locker.Inspect, or reqlock inspect as -part user-42 -part pay-1.
func ExampleJoinKeys() {
	fmt.Println(httplock.JoinKeys("user-42", "pay-1"))
	fmt.Println(httplock.LockKey("POST /payments", httplock.JoinKeys("user-42", "pay-1")))
	// Output:
	// 7:user-425:pay-1
	// 14:POST /payments:7:user-425:pay-1
}

// A background job takes the same lock as the route, so it never runs
// alongside a request for the same order.
func ExampleLockKey() {
	locker := core.NewLocker(memorystore.New())
	_ = httplock.New(httplock.Config{Locker: locker, Key: httplock.FromPathValue("id"), Scope: "orders"})

	err := locker.Do(context.Background(), httplock.LockKey("orders", "42"), func(ctx context.Context) error {
		fmt.Println("reconciling order 42")
		return nil
	})
	fmt.Println(err)
	// Output:
	// reconciling order 42
	// <nil>
}
