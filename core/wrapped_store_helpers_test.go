package core

import (
	"context"
	"time"
)

// embeddingMemoryStore is how a user adds to the memory store: every Store
// and Waker method is the embedded one's.
type embeddingMemoryStore struct{ *MemoryStore }

// forwardingMemoryStore is a user's plain Store over a memory store, say
// to count its calls: each method passes its context on unchanged.
type forwardingMemoryStore struct{ inner *MemoryStore }

func (f forwardingMemoryStore) Acquire(ctx context.Context, l Lease) (Grant, error) {
	return f.inner.Acquire(ctx, l)
}

func (f forwardingMemoryStore) Extend(ctx context.Context, leases []Lease) []Renewal {
	return f.inner.Extend(ctx, leases)
}

func (f forwardingMemoryStore) Release(ctx context.Context, key, token string) error {
	return f.inner.Release(ctx, key, token)
}

func (f forwardingMemoryStore) TTL(ctx context.Context, key, token string) (time.Duration, error) {
	return f.inner.TTL(ctx, key, token)
}
