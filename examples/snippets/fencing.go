package snippets

import (
	"context"
	"errors"
	"sync"

	"github.com/reqlock/reqlock/core"
)

// ErrStaleFence is what the fenced resource of docs/safety.md answers a
// holder older than one it has already seen.
var ErrStaleFence = errors.New("stale fence: a newer holder has written")

// Account is docs/safety.md's fenced resource: it remembers the highest
// fence it accepted and refuses a write with a lower one, so a holder that
// paused past its lease (a GC pause, a stopped VM) cannot undo the work of
// the holder that came after it.
type Account struct {
	mu      sync.Mutex
	fence   uint64
	balance int64
}

// Apply adds delta for the holder of fence.
func (a *Account) Apply(fence uint64, delta int64) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if fence < a.fence {
		return ErrStaleFence
	}
	a.fence = fence
	a.balance += delta
	return nil
}

// Deposit is docs/safety.md's holder: the fence travels with the write.
func Deposit(ctx context.Context, locker *core.Locker, acct *Account, amount int64) error {
	return locker.Do(ctx, "account:42", func(ctx context.Context) error {
		lk, _ := core.FromContext(ctx)
		return acct.Apply(lk.Fence(), amount)
	})
}
