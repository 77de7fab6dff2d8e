package redisstore

import (
	"cmp"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core/store"
)

// The permits of a key (store.Semaphores) live beside its lock, under the
// same {hash tag}, so that a Cluster keeps them in one slot: a sorted set
// of the holders' tokens scored by the server-clock millisecond their
// lease ends, a hash of their fences, and a fence counter. Each operation
// is one script in lua/, one round trip.
var (
	//go:embed lua/permit_acquire.lua
	permitAcquireLua    string
	permitAcquireScript = redis.NewScript(permitAcquireLua)
	//go:embed lua/permit_release.lua
	permitReleaseLua    string
	permitReleaseScript = redis.NewScript(permitReleaseLua)
	//go:embed lua/permit_extend.lua
	permitExtendLua    string
	permitExtendScript = redis.NewScript(permitExtendLua)
	//go:embed lua/permit_ttl.lua
	permitTTLLua    string
	permitTTLScript = redis.NewScript(permitTTLLua)
	//go:embed lua/permit_inspect.lua
	permitInspectLua    string
	permitInspectScript = redis.NewScript(permitInspectLua)
	//go:embed lua/permit_leave.lua
	permitLeaveLua    string
	permitLeaveScript = redis.NewScript(permitLeaveLua)
)

var (
	_ store.Semaphores  = (*Store)(nil)
	_ store.PermitLines = (*Store)(nil)
)

// The keys of a lock key's permits, in its slot.
func permitsKey(key string) string      { return key + ":permits" }
func permitFencesKey(key string) string { return key + ":permits:fences" }
func permitFenceKey(key string) string  { return key + ":permits:fence" }
func permitCancelKey(key, token string) string {
	return key + ":permits:cancel:" + token
}
func permitLineKey(key string) string { return key + ":permits:q" }
func permitSeenKey(key string) string { return key + ":permits:q:seen" }

// permitFenceTTL is how long a permit fence counter outlives the last use
// of its key: long enough that a backward step of the server clock within
// it cannot reorder fences, short enough that one-off keys do not pile up.
func permitFenceTTL(lease time.Duration) time.Duration { return max(10*lease, time.Minute) }

// AcquirePermit implements store.Semaphores: prune the expired permits,
// then admit if fewer than limit are held; one script. Replica
// acknowledgements (WithReplicaAcks) apply to locks only.
func (s *Store) AcquirePermit(ctx context.Context, l store.Lease, limit int) (store.Grant, error) {
	return s.acquirePermit(ctx, l, limit, "")
}

// AcquirePermitQueued implements store.PermitLines: AcquirePermit for a
// waiter, which joins the line when refused; the same script.
func (s *Store) AcquirePermitQueued(ctx context.Context, l store.Lease, limit int, waiter string) (store.Grant, error) {
	return s.acquirePermit(ctx, l, limit, waiter)
}

func (s *Store) acquirePermit(ctx context.Context, l store.Lease, limit int, waiter string) (store.Grant, error) {
	key := l.Key
	n, err := permitAcquireScript.Run(ctx, s.c,
		[]string{permitsKey(key), permitFencesKey(key), permitFenceKey(key), permitCancelKey(key, l.Token),
			permitLineKey(key), permitSeenKey(key)},
		l.Token, l.TTL.Milliseconds(), limit, permitFenceTTL(l.TTL).Milliseconds(),
		waiter, key, store.PermitLineKeep.Milliseconds()).Int64()
	if err != nil {
		return store.Grant{}, s.permitErr(err)
	}
	if n <= 0 {
		return store.Grant{}, &store.NotObtainedError{Remaining: time.Duration(-n) * time.Millisecond}
	}
	return store.Grant{Fence: uint64(n), Validity: store.Validity(l.TTL)}, nil
}

// ExtendPermits implements store.Semaphores: every lease in one pipeline.
func (s *Store) ExtendPermits(ctx context.Context, leases []store.Lease) []store.Renewal {
	out := make([]store.Renewal, len(leases))
	cmds := make([]*redis.Cmd, len(leases))
	send := func(p redis.Pipeliner, i int, sha bool) {
		l := leases[i]
		keys := []string{permitsKey(l.Key), permitFencesKey(l.Key)}
		if sha {
			cmds[i] = permitExtendScript.EvalSha(ctx, p, keys, l.Token, l.TTL.Milliseconds())
		} else {
			cmds[i] = permitExtendScript.Eval(ctx, p, keys, l.Token, l.TTL.Milliseconds())
		}
	}
	_, _ = s.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i := range leases {
			send(p, i, true)
		}
		return nil
	})
	// A server that does not know the script yet (first use, a restart, a
	// failover) gets it once, in a second pipeline.
	var again []int
	for i, cmd := range cmds {
		if err := cmd.Err(); err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
			again = append(again, i)
		}
	}
	if len(again) > 0 {
		_, _ = s.c.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, i := range again {
				send(p, i, false)
			}
			return nil
		})
	}
	for i, cmd := range cmds {
		n, err := cmd.Int64()
		switch {
		case err != nil:
			out[i].Err = s.permitErr(err)
		case n == 0:
			out[i].Err = store.ErrNotHeld
		default:
			out[i].Validity = store.Validity(leases[i].TTL)
		}
	}
	return out
}

// ReleasePermit implements store.Semaphores: the permit goes, and the head
// of the key's line is woken.
func (s *Store) ReleasePermit(ctx context.Context, key, token string) error {
	return s.releasePermit(ctx, []string{permitsKey(key), permitFencesKey(key), permitLineKey(key)}, token, key)
}

// LeavePermitLine implements store.PermitLines: the waiter leaves the
// line, and the waiter now at its head is woken.
func (s *Store) LeavePermitLine(ctx context.Context, key, waiter string) error {
	err := permitLeaveScript.Run(ctx, s.c, []string{permitLineKey(key), permitSeenKey(key)}, waiter, key).Err()
	return s.permitErr(err)
}

// SubscribePermits implements store.PermitLines: the same wake-up channel
// as the locks' (Subscribe), for the Semaphore's Locker.
func (s *Store) SubscribePermits(prefix, instance string, wake func(key, waiter string)) store.Subscription {
	return s.n.Subscribe(prefix, instance, wake)
}

// CancelPermit implements store.Semaphores: the permit is given back if
// l.Token holds one, and a marker left for the token, for a lease, makes
// an acquire with it that is still on its way take nothing when it lands.
func (s *Store) CancelPermit(ctx context.Context, l store.Lease) error {
	return s.releasePermit(ctx, []string{permitsKey(l.Key), permitFencesKey(l.Key), permitLineKey(l.Key), permitCancelKey(l.Key, l.Token)},
		l.Token, l.Key, l.TTL.Milliseconds())
}

func (s *Store) releasePermit(ctx context.Context, keys []string, token string, args ...any) error {
	n, err := permitReleaseScript.Run(ctx, s.c, keys, append([]any{token}, args...)...).Int64()
	if err != nil {
		return s.permitErr(err)
	}
	if n == 0 {
		return store.ErrNotHeld
	}
	return nil
}

// PermitTTL implements store.Semaphores.
func (s *Store) PermitTTL(ctx context.Context, key, token string) (time.Duration, error) {
	n, err := permitTTLScript.Run(ctx, s.c, []string{permitsKey(key)}, token).Int64()
	if err != nil {
		return 0, s.permitErr(err)
	}
	if n < 0 {
		return 0, store.ErrNotHeld
	}
	return time.Duration(n) * time.Millisecond, nil
}

// InspectPermits implements store.Semaphores: one read-only script.
func (s *Store) InspectPermits(ctx context.Context, key string) ([]store.Holding, error) {
	vals, err := permitInspectScript.Run(ctx, s.c, []string{permitsKey(key), permitFencesKey(key)}).Slice()
	if err != nil {
		if errors.Is(err, redis.Nil) {
			return nil, nil
		}
		return nil, s.permitErr(err)
	}
	if len(vals)%3 != 0 {
		return nil, fmt.Errorf("reqlock: permit_inspect.lua answered %d values, not triples", len(vals))
	}
	hs := make([]store.Holding, 0, len(vals)/3)
	for i := 0; i < len(vals); i += 3 {
		label, _ := vals[i].(string)
		ms, _ := vals[i+1].(int64)
		fs, _ := vals[i+2].(string)
		fence, err := strconv.ParseUint(fs, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("reqlock: permit_inspect.lua answered the fence %q: %w", fs, err)
		}
		hs = append(hs, store.Holding{Held: true, Lease: time.Duration(ms) * time.Millisecond, Fence: fence, Holder: label})
	}
	slices.SortFunc(hs, func(a, b store.Holding) int { return cmp.Compare(a.Fence, b.Fence) })
	return hs, nil
}

// permitErr is err as the store's other calls return it: a closed client
// is store.ErrStoreClosed, a failed dial is named.
func (s *Store) permitErr(err error) error {
	if errors.Is(err, redis.ErrClosed) {
		err = fmt.Errorf("%w: %w", store.ErrStoreClosed, err)
	}
	return s.dial.explain(err)
}
