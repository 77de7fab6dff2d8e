package core_test

import (
	"context"
	"errors"
	"sync"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
)

// flakyStore fails its first n acquires, as a store that is down for a
// moment does.
type flakyStore struct {
	core.Store
	mu    sync.Mutex
	left  int
	fails int
}

func newFlakyStore(s core.Store, n int) *flakyStore { return &flakyStore{Store: s, left: n} }

var errFlaky = errors.New("store down for a moment")

func (f *flakyStore) Acquire(ctx context.Context, l store.Lease) (store.Grant, error) {
	f.mu.Lock()
	if f.left > 0 {
		f.left--
		f.fails++
		f.mu.Unlock()
		return store.Grant{}, errFlaky
	}
	f.mu.Unlock()
	return f.Store.Acquire(ctx, l)
}

func (f *flakyStore) failed() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.fails
}
