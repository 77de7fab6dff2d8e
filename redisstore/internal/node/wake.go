package node

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/reqlock/reqlock/core/store"
)

// AcquireQueued implements store.Waker: acquire.lua with the waiter, one round
// trip.
func (s *Node) AcquireQueued(ctx context.Context, l store.Lease, waiter string, withRecord bool) (store.Grant, []byte, error) {
	if s.acks != nil { // WAIT must follow the acquire on its connection: no line
		return s.acquire(ctx, l, withRecord, waiter)
	}
	ttl, fttl := s.leaseArgs(l.TTL)
	clock := s.clock.now()
	if clock == nil {
		clock = "" // the script asks the server
	}
	call, args := acquireQueuedCall, queuedArgs(l, ttl, fttl, clock, waiter, withRecord)
	if withRecord && l.Mark.Retention > 0 {
		call, args = acquireMarkCall, markedArgs(l, ttl, fttl, clock, waiter)
	}
	cmd, resent := s.sendAcquire(ctx, call, args, l.Token)
	a, err := acquireReply(cmd)
	if resent {
		a, err = s.voidRefused(ctx, l, waiter, a, resent, err)
	}
	return granted(l, a, err)
}

// Leave implements store.Waker: release.lua on the waiter's hand-off, if it has
// one, after taking it out of the line; one round trip. Over a client that
// may resend commands, or when one of the wait's attempts may have a copy
// on its way (see resend.go), it also leaves the marker of the waiter's
// name, which Locker's attempts in line carry as their token: a copy of one
// of them still on its way then takes nothing when it lands. A run mark of
// that name, which such an attempt may have left as it landed, goes too
// (store.AcquireMarker).
func (s *Node) Leave(ctx context.Context, key, waiter string) error {
	token := store.HandedOverToken(waiter)
	var marker time.Duration
	if s.resends || s.resent.has(token) {
		marker = releaseMarkerTTL
	}
	if err := s.release(ctx, key, token, marker, waiter, true).Err(); err != nil {
		return storeErr(err)
	}
	s.resent.forget(token) // the marker is there if it was due
	return nil
}

// Subscribe implements store.Waker: one pub/sub connection, opened on the first
// Hold and closed a moment after the last holder let go.
func (s *Node) Subscribe(prefix, instance string, wake func(key, waiter string)) store.Subscription {
	return s.SubscribeGrants(prefix, instance, func(key, waiter string, _ uint64) { wake(key, waiter) })
}

// SubscribeGrants implements store.Granter: Subscribe, with the fence of a lock
// release.lua handed to the waiter, 0 when it handed none.
func (s *Node) SubscribeGrants(prefix, instance string, grant func(key, waiter string, fence uint64)) store.Subscription {
	return &redisSub{c: s.c, channel: wakeChannel(prefix, instance), wake: grant}
}

// redisSub is one Locker's subscription to its wake-up channel.
type redisSub struct {
	c       redis.UniversalClient
	channel string
	wake    func(key, waiter string, fence uint64)

	mu        sync.Mutex
	ps        *redis.PubSub // nil while closed
	confirmed chan struct{} // closed once Redis confirmed the subscription
	done      chan struct{} // closed when the reader of ps has stopped
	stop      chan struct{} // closed to cut short the reader's pause between reconnects
	holders   int
	idle      *time.Timer // closes ps after unwatchLinger with no holder
}

func (r *redisSub) Hold(ctx context.Context) (func(), error) {
	r.mu.Lock()
	if r.idle != nil {
		r.idle.Stop()
		r.idle = nil
	}
	if r.ps == nil {
		r.ps = r.c.Subscribe(context.WithoutCancel(ctx))
		r.confirmed, r.done, r.stop = make(chan struct{}), make(chan struct{}), make(chan struct{})
		go r.read(r.ps, r.confirmed, r.done, r.stop)
		if err := r.ps.Subscribe(ctx, r.channel); err != nil {
			r.closeLocked()
			r.mu.Unlock()
			return nil, err
		}
	}
	r.holders++
	confirmed := r.confirmed
	r.mu.Unlock()
	select {
	case <-confirmed:
		return r.letGo, nil
	case <-ctx.Done():
		r.letGo()
		return nil, ctx.Err()
	}
}

func (r *redisSub) letGo() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.holders--; r.holders == 0 && r.ps != nil {
		r.idle = time.AfterFunc(unwatchLinger, func() {
			r.mu.Lock()
			defer r.mu.Unlock()
			if r.holders == 0 && r.ps != nil {
				r.closeLocked()
			}
		})
	}
}

// closeLocked closes the connection and waits for its reader; the caller
// holds mu. The reader may be pausing between reconnects (up to a second
// while Redis is away): stop cuts that short, so a Hold that comes next
// does not wait for it.
func (r *redisSub) closeLocked() {
	close(r.stop)
	_ = r.ps.Close()
	<-r.done
	r.ps, r.confirmed, r.done, r.stop, r.idle = nil, nil, nil, nil, nil
}

// listening reports whether the subscription is open and confirmed, so that
// a waiter may join the line with its very first attempt.
func (r *redisSub) Listening() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.confirmed == nil {
		return false
	}
	select {
	case <-r.confirmed:
		return true
	default:
		return false
	}
}

// read delivers what ps receives until it is closed. A broken connection is
// reconnected (go-redis subscribes again): what was published meanwhile is
// lost, so once the subscription is back every waiter is woken to look for
// itself.
func (r *redisSub) read(ps *redis.PubSub, confirmed, done, stop chan struct{}) {
	defer close(done)
	pause := 10 * time.Millisecond
	lost := false
	for {
		msg, err := ps.Receive(context.Background())
		if err != nil {
			if errors.Is(err, redis.ErrClosed) {
				return
			}
			lost = true
			t := time.NewTimer(pause)
			select {
			case <-t.C:
			case <-stop:
				t.Stop()
				return
			}
			pause = min(2*pause, time.Second)
			continue
		}
		pause = 10 * time.Millisecond
		switch m := msg.(type) {
		case *redis.Subscription:
			if m.Kind == "subscribe" {
				select {
				case <-confirmed:
				default:
					close(confirmed)
				}
				if lost {
					lost = false
					r.wake(store.WakeAll, store.WakeAll, 0)
				}
			}
		case *redis.Message:
			if key, waiter, fence, ok := parseWake(m.Payload); ok {
				r.wake(key, waiter, fence)
			}
		}
	}
}

// parseWake reads release.lua's message: the key, the waiter and, when the
// lock was handed to that waiter, its fence; fence is 0 when there is none
// or it is no number. A key ends with its hash tag's '}', and the prefix
// before it may hold spaces; a waiter holds neither spaces nor braces.
func parseWake(payload string) (key, waiter string, fence uint64, ok bool) {
	end := strings.LastIndex(payload, "} ")
	if end < 0 {
		return "", "", 0, false
	}
	key, waiter, ok = payload[:end+1], payload[end+2:], true
	if w, f, hasFence := strings.Cut(waiter, " "); hasFence {
		waiter = w
		// On overflow ParseUint returns its largest value with the error.
		if n, err := strconv.ParseUint(f, 10, 64); err == nil {
			fence = n
		}
	}
	return key, waiter, fence, ok
}

// unwatchLinger is how long a subscription stays open after its last
// holder let go: under steady contention waiters come and go all the time,
// and each SUBSCRIBE and UNSUBSCRIBE is a command.
const unwatchLinger = 500 * time.Millisecond
