package core

import (
	"context"
	"time"

	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/memorystore"
)

// embeddingMemoryStore is how a user adds to the memory store: every Store
// and Waker method is the embedded one's.
type embeddingMemoryStore struct{ *memorystore.Store }

// forwardingMemoryStore is a user's plain Store over a memory store, say
// to count its calls: each method passes its context on unchanged.
type forwardingMemoryStore struct{ inner *memorystore.Store }

func (f forwardingMemoryStore) Acquire(ctx context.Context, l store.Lease) (store.Grant, error) {
	return f.inner.Acquire(ctx, l)
}

func (f forwardingMemoryStore) Extend(ctx context.Context, leases []store.Lease) []store.Renewal {
	return f.inner.Extend(ctx, leases)
}

func (f forwardingMemoryStore) Release(ctx context.Context, key, token string) error {
	return f.inner.Release(ctx, key, token)
}

func (f forwardingMemoryStore) TTL(ctx context.Context, key, token string) (time.Duration, error) {
	return f.inner.TTL(ctx, key, token)
}
