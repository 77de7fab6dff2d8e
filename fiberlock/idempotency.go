package fiberlock

import (
	"context"
	"fmt"
	"sync"

	"github.com/gofiber/fiber/v3/middleware/idempotency"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
)

// IdempotencyScope is the scope of the keys IdempotencyLocker takes: the
// lock of Idempotency-Key k is httplock.LockKey(IdempotencyScope, k),
// hashed by the Locker like every other.
const IdempotencyScope = "fiber idempotency"

// IdempotencyLocker returns a Locker for Fiber's idempotency middleware
// (idempotency.Config.Lock) that holds its keys in l's store, so that a
// duplicate sent to another instance waits too; Fiber's default,
// idempotency.NewMemoryLock, holds them in one process only. Give the
// middleware a Storage that the instances share as well, or each keeps its
// own responses.
//
// Lock waits for the key as l.Obtain does, by l's retry policy (unbounded
// by default; core.WithRetry with backoff.Limit bounds it), and fails when
// the store is unavailable: the middleware then answers with an error. The
// lease is renewed by l's watchdog while the request runs. It panics if l
// is nil.
func IdempotencyLocker(l *core.Locker) idempotency.Locker {
	if l == nil {
		panic(fmt.Errorf("fiberlock.IdempotencyLocker: %w: the Locker is nil", httplock.ErrInvalidConfig))
	}
	return &idempotencyLocker{l: l, held: make(map[string][]*core.Lock)}
}

type idempotencyLocker struct {
	l  *core.Locker
	mu sync.Mutex
	// held are the locks taken and not yet unlocked, by key: one, unless
	// a lock was lost (its lease ran out) and the key taken again here.
	held map[string][]*core.Lock
}

// Lock waits for the key and holds it until Unlock.
func (x *idempotencyLocker) Lock(key string) error {
	lk, err := x.l.Obtain(context.Background(), httplock.LockKey(IdempotencyScope, key))
	if err != nil {
		return fmt.Errorf("fiberlock: idempotency key: %w", err)
	}
	x.mu.Lock()
	x.held[key] = append(x.held[key], lk)
	x.mu.Unlock()
	return nil
}

// Unlock releases the key. A key this Locker does not hold is
// core.ErrNotHeld; so is a key whose lock was lost meanwhile (its lease ran
// out with the store unreachable).
func (x *idempotencyLocker) Unlock(key string) error {
	lk := x.take(key)
	if lk == nil {
		return fmt.Errorf("fiberlock: idempotency key not locked here: %w", core.ErrNotHeld)
	}
	ctx, cancel := context.WithTimeout(context.Background(), httplock.DefaultStoreTimeout)
	defer cancel()
	if err := lk.Release(ctx); err != nil {
		return fmt.Errorf("fiberlock: idempotency key: %w", err)
	}
	return nil
}

// take removes and returns a lock held for key, or nil. Unlock cannot tell
// which caller it serves; when a lost lock and its successor are both
// here, the lost one goes first: releasing it is harmless, while releasing
// the successor's would let a third request in beside it.
func (x *idempotencyLocker) take(key string) *core.Lock {
	x.mu.Lock()
	defer x.mu.Unlock()
	locks := x.held[key]
	if len(locks) == 0 {
		return nil
	}
	i := 0
	for j, lk := range locks {
		select {
		case <-lk.Lost():
			i = j
		default:
			continue
		}
		break
	}
	lk := locks[i]
	locks = append(locks[:i], locks[i+1:]...)
	if len(locks) == 0 {
		delete(x.held, key)
	} else {
		x.held[key] = locks
	}
	return lk
}
