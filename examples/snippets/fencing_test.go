package snippets

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/memorystore"
)

// TestAccountRefusesAnOlderHolder: the second holder's fence is higher, so
// the first holder's late write is refused.
func TestAccountRefusesAnOlderHolder(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	locker := core.NewLocker(memorystore.New())
	acct := &Account{}

	first, err := locker.TryObtain(ctx, "account:42")
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := Deposit(ctx, locker, acct, 10); err != nil {
		t.Fatal(err)
	}
	if err := acct.Apply(first.Fence(), 99); !errors.Is(err, ErrStaleFence) {
		t.Errorf("late write from the first holder: %v; want ErrStaleFence", err)
	}
	if acct.balance != 10 {
		t.Errorf("balance %d; want 10", acct.balance)
	}
}
