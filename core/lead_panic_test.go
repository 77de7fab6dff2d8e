package core_test

import (
	"context"
	"testing"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/memorystore"
)

// A panic in fn goes on up out of Lead, and the term is given back on the
// way: another instance leads at once, without waiting for the lease.
func TestLeadResignsWhenFnPanics(t *testing.T) {
	s := memorystore.New()
	a, b := leadLocker(s), leadLocker(s)
	var term uint64
	func() {
		defer func() {
			if r := recover(); r != "boom" {
				t.Fatalf("recovered %v, want fn's panic", r)
			}
		}()
		_ = a.Lead(context.Background(), "k", func(ctx context.Context) error {
			lk, _ := core.FromContext(ctx)
			term = lk.Fence()
			panic("boom")
		})
		t.Fatal("Lead returned instead of panicking")
	}()
	lk, err := b.TryObtain(context.Background(), "k")
	if err != nil {
		t.Fatalf("right after the panic the key is still taken: %v", err)
	}
	defer lk.Release(context.Background())
	if lk.Fence() <= term {
		t.Fatalf("the next term %d is not above the panicked one %d", lk.Fence(), term)
	}
}
