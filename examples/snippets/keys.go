package snippets

import (
	"context"
	"fmt"
	"net/http"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
)

// SharedScope is docs/keys.md's shared scope: one user's refunds and
// payments never run at once, though they are two routes.
func SharedScope(locker *core.Locker, mux *http.ServeMux) {
	money := httplock.New(httplock.Config{
		Locker: locker,
		Key:    httplock.FromContext(userKey{}),
		Scope:  "money", // one lock per user across both routes
	})
	mux.Handle("POST /payments", auth(money(http.HandlerFunc(pay))))
	mux.Handle("POST /refunds", auth(money(http.HandlerFunc(pay))))
}

// InspectPayment is docs/keys.md's "who holds it": the lock of user-42's
// POST /payments with Idempotency-Key pay-1, as the middleware built it.
func InspectPayment(ctx context.Context, locker *core.Locker) error {
	key := httplock.LockKey("POST /payments", httplock.JoinKeys("user-42", "pay-1"))
	h, err := locker.Inspect(ctx, key)
	if err != nil {
		return err
	}
	fmt.Printf("held=%v by=%q for=%v fence=%d waiting=%d store key=%s\n",
		h.Held, h.Holder, h.Lease, h.Fence, h.Waiting, h.StoreKey)
	return nil
}
