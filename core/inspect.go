package core

import (
	"context"
	"errors"

	"github.com/reqlock/reqlock/core/store"
)

// Inspect reports who holds key (the raw key, hashed as Obtain hashes it)
// and for how long, the key's last fence and how many wait for it. It only
// reads: nothing in the store changes. A store failure is ErrUnavailable; a
// store that cannot be inspected gives ErrNoInspect. StoreKey is filled in
// whenever the key is valid, so that an operator can look further with
// redis-cli even when the store is down.
func (l *Locker) Inspect(ctx context.Context, key string) (Holding, error) {
	skey, err := storeKey(l.prefix, key)
	if err != nil {
		return Holding{}, err
	}
	in, ok := l.store.(store.Inspector)
	if !ok {
		return Holding{StoreKey: skey}, ErrNoInspect
	}
	h, err := in.Inspect(ctx, skey)
	if err != nil {
		if errors.Is(err, ErrNoInspect) {
			return Holding{StoreKey: skey}, err
		}
		return Holding{StoreKey: skey}, unavailable("inspect", ctxErr(ctx), err)
	}
	h.StoreKey = skey
	return h, nil
}
