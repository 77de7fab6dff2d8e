package pgstore

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/reqlock/reqlock/core/store"
	contract "github.com/reqlock/reqlock/core/store"
)

// AcquireQueued implements store.Waker: reqlock_acquire with the waiter,
// one round trip. A lock a release handed to waiter is taken; refused, the
// waiter joins the key's line, once, and learns the last fence handed out.
func (s *Store) AcquireQueued(ctx context.Context, l store.Lease, waiter string, withRecord bool) (store.Grant, []byte, error) {
	return s.acquire(ctx, l, &waiter, withRecord)
}

// leaveMarker is how long Leave voids the waiter's attempts still on their
// way: every attempt of one wait carries the token of its hand-off.
const leaveMarker = time.Minute

// Leave implements store.Waker: the waiter leaves the key's line, a lock
// handed to it goes on to the next in line, and an attempt of it that
// lands later takes nothing. One round trip.
func (s *Store) Leave(ctx context.Context, key, waiter string) error {
	ms := leaveMarker.Milliseconds()
	err := s.release(ctx, key, contract.HandedOverToken(waiter), &ms, &waiter)
	if err == contract.ErrNotHeld { // nothing was handed to it: out of line is all
		return nil
	}
	return err
}

// Subscribe implements store.Waker: one LISTEN connection per subscription,
// opened on the first Hold and closed a moment after the last holder let
// go.
func (s *Store) Subscribe(prefix, instance string, wake func(key, waiter string)) store.Subscription {
	return s.SubscribeGrants(prefix, instance, func(key, waiter string, _ uint64) { wake(key, waiter) })
}

// SubscribeGrants implements store.Granter: Subscribe whose wake-ups carry
// the fence of a lock a release handed to the waiter (0: none).
func (s *Store) SubscribeGrants(prefix, instance string, grant func(key, waiter string, fence uint64)) store.Subscription {
	return &subscription{store: s, prefix: prefix, channel: wakeChannel(instance), grant: grant}
}

// wakeChannel is the channel reqlock_tell notifies for instance.
func wakeChannel(instance string) string { return "reqlock:wake:" + instance }

// parseWake reads reqlock_tell's message: the key, the waiter and, when
// the lock was handed to that waiter, its fence (0 when none). A key ends
// with its hash tag's '}', and the prefix before it may hold spaces; a
// waiter holds neither spaces nor braces.
//
// "* <waiter>" wakes the waiter whatever key it waits for: the key was too
// long for a notification.
func parseWake(payload string) (key, waiter string, fence uint64, ok bool) {
	if w, ok := strings.CutPrefix(payload, store.WakeAll+" "); ok {
		return store.WakeAll, w, 0, w != ""
	}
	end := strings.LastIndex(payload, "} ")
	if end < 0 {
		return "", "", 0, false
	}
	key, waiter = payload[:end+1], payload[end+2:]
	if w, f, hasFence := strings.Cut(waiter, " "); hasFence {
		waiter = w
		if n, err := strconv.ParseUint(f, 10, 64); err == nil {
			fence = n
		}
	}
	return key, waiter, fence, waiter != ""
}
