package pgstore

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/reqlock/reqlock/core/store"
)

// linger is how long a subscription's connection stays open after its
// last holder let go: under steady contention waiters come and go all the
// time, and each connection costs a backend.
const linger = 500 * time.Millisecond

// probeEvery is how long the listening connection may stay silent before
// it is pinged: a link that died without a word (no reset) is found within
// this and probeTimeout, and the waiters fall back to their backoff.
const (
	probeEvery   = 10 * time.Second
	probeTimeout = 3 * time.Second
)

// subscription is one Locker's LISTEN connection: a connection of its own,
// made as the pool makes its connections (with its hooks), or, when none
// can be opened, one taken out of the pool for good, on which it listens
// to its instance's channel. A lost connection wakes every waiter (they fall back to their
// backoff), is opened again by itself, and wakes every waiter once more
// when it listens again: what was notified meanwhile is lost.
type subscription struct {
	store   *Store
	prefix  string
	channel string
	grant   func(key, waiter string, fence uint64)

	mu      sync.Mutex
	holders int
	run     *listenRun // nil while closed
	idle    *time.Timer
}

// listenRun is one run of the listening goroutine.
type listenRun struct {
	stop      context.CancelFunc
	done      chan struct{} // closed when the goroutine has ended
	confirmed chan struct{} // closed once the first LISTEN succeeded
	tried     chan struct{} // closed once the first attempt ended, either way
	live      atomic.Bool   // listening right now
}

// Hold implements store.Subscription.
func (sub *subscription) Hold(ctx context.Context) (func(), error) {
	sub.mu.Lock()
	if sub.idle != nil {
		sub.idle.Stop()
		sub.idle = nil
	}
	if sub.run == nil {
		rctx, stop := context.WithCancel(context.Background())
		sub.run = &listenRun{stop: stop, done: make(chan struct{}), confirmed: make(chan struct{}),
			tried: make(chan struct{})}
		go sub.listen(rctx, sub.run)
	}
	sub.holders++
	confirmed, tried := sub.run.confirmed, sub.run.tried
	sub.mu.Unlock()
	select {
	case <-confirmed:
		return sub.letGo, nil
	case <-tried:
		select {
		case <-confirmed:
			return sub.letGo, nil
		default:
		}
		// No connection to listen on (none to be had now): the waiter
		// falls back to its backoff at once rather than wait for one.
		sub.letGo()
		return nil, errNotListening
	case <-ctx.Done():
		sub.letGo()
		return nil, ctx.Err()
	}
}

// Listening implements store.Listener: the connection listens now.
func (sub *subscription) Listening() bool {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	return sub.run != nil && sub.run.live.Load()
}

func (sub *subscription) letGo() {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	if sub.holders--; sub.holders == 0 && sub.run != nil {
		run := sub.run
		sub.idle = time.AfterFunc(linger, func() {
			sub.mu.Lock()
			if sub.holders != 0 || sub.run != run {
				sub.mu.Unlock()
				return
			}
			sub.run, sub.idle = nil, nil
			sub.mu.Unlock()
			run.stop()
			<-run.done
		})
	}
}

// listen keeps a connection listening until ctx ends.
func (sub *subscription) listen(ctx context.Context, run *listenRun) {
	defer close(run.done)
	pause := 10 * time.Millisecond
	lost := false
	for {
		conn, err := sub.open(ctx)
		if err == nil {
			run.live.Store(true)
			select {
			case <-run.confirmed:
			default:
				close(run.confirmed)
			}
		}
		select {
		case <-run.tried:
		default:
			close(run.tried)
		}
		if err == nil {
			if lost {
				sub.grant(store.WakeAll, store.WakeAll, 0)
			}
			pause = 10 * time.Millisecond
			sub.receive(ctx, conn)
			run.live.Store(false)
			closeConn(conn)
		}
		if ctx.Err() != nil {
			return
		}
		if !lost {
			lost = true
			// Releases may go unheard from now on: every waiter polls.
			sub.grant(store.WakeAll, store.WakeAll, 0)
		}
		t := time.NewTimer(pause)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return
		}
		pause = min(2*pause, time.Second)
	}
}

// acquireTimeout bounds the wait for a connection to listen on, opened or
// taken from the pool: a pool that is all in use has none to spare, and
// the waiters poll meanwhile.
const acquireTimeout = time.Second

// open takes a connection out of the pool, for good, and listens on it.
// The pool makes it as it makes any of its connections (its BeforeConnect
// and AfterConnect hooks, a password from a function), and it counts no
// longer against the pool's size once taken.
func (sub *subscription) open(ctx context.Context) (*pgx.Conn, error) {
	conn, err := sub.dial(ctx)
	if err != nil {
		// No new connection to be had (max_connections, a proxy that
		// refuses): listen on one of the pool's, taken out of it for good.
		actx, cancel := context.WithTimeout(ctx, acquireTimeout)
		pc, perr := sub.store.pool.Acquire(actx)
		cancel()
		if perr != nil {
			return nil, perr
		}
		conn = pc.Hijack()
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	// A channel name is an identifier, which cannot be a parameter: it is
	// quoted, and made of our own instance id.
	if _, err := conn.Exec(cctx, "LISTEN "+pgx.Identifier{sub.channel}.Sanitize()); err != nil {
		closeConn(conn)
		return nil, err
	}
	return conn, nil
}

// dial opens a connection of the subscription's own, as the pool opens
// its own (its BeforeConnect and AfterConnect hooks: a host from service
// discovery, a short-lived password), so that listening takes none of
// the connections the pool keeps idle: a waiter's next attempt would
// otherwise wait for the pool to open one, past what its policy says.
func (sub *subscription) dial(ctx context.Context) (*pgx.Conn, error) {
	cfg := sub.store.pool.Config()
	cc := cfg.ConnConfig.Copy()
	dctx, cancel := context.WithTimeout(ctx, acquireTimeout)
	defer cancel()
	if cfg.BeforeConnect != nil {
		if err := cfg.BeforeConnect(dctx, cc); err != nil {
			return nil, err
		}
	}
	conn, err := pgx.ConnectConfig(dctx, cc)
	if err != nil {
		return nil, err
	}
	if cfg.AfterConnect != nil {
		if err := cfg.AfterConnect(dctx, conn); err != nil {
			closeConn(conn)
			return nil, err
		}
	}
	return conn, nil
}

// receive delivers notifications until the connection fails or ctx ends.
func (sub *subscription) receive(ctx context.Context, conn *pgx.Conn) {
	for {
		wctx, cancel := context.WithTimeout(ctx, probeEvery)
		n, err := conn.WaitForNotification(wctx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			if wctx.Err() == nil || conn.IsClosed() {
				return // the connection failed
			}
			pctx, cancel := context.WithTimeout(ctx, probeTimeout)
			err = conn.Ping(pctx)
			cancel()
			if err != nil {
				return
			}
			continue
		}
		if key, waiter, fence, ok := parseWake(n.Payload); ok && (key == store.WakeAll || strings.HasPrefix(key, sub.prefix)) {
			sub.grant(key, waiter, fence)
		}
	}
}

func closeConn(conn *pgx.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = conn.Close(ctx)
}
