package redisstore

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/redisstore/internal/perclient"
)

// dialWatch remembers a client's last failed dial. go-redis retries a dial
// that fails until the caller's deadline, and then reports only the
// deadline: a Redis that is not running reads as "context deadline
// exceeded" after the store's timeout, and "connection refused" shows only
// in go-redis's own log. The store's errors carry the dial error instead.
type dialWatch struct{ last atomic.Pointer[dialFailure] }

type dialFailure struct {
	err error
	at  time.Time
}

// dialMemory is how long a failed dial explains the errors after it, unless
// a dial succeeds meanwhile.
const dialMemory = 30 * time.Second

// watches holds one dialWatch per client, so that several stores over one
// client add one hook; it lets go of a client once the client is collected.
var watches perclient.Map[*dialWatch]

func watchDials(c redis.UniversalClient) *dialWatch {
	w, loaded := watches.LoadOrStore(c, &dialWatch{})
	if !loaded {
		c.AddHook(w)
	}
	return w
}

func (w *dialWatch) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := next(ctx, network, addr)
		if err != nil {
			w.last.Store(&dialFailure{err: err, at: time.Now()})
		} else {
			w.last.Store(nil)
		}
		return conn, err
	}
}

func (w *dialWatch) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (w *dialWatch) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// explain marks an error of a closed client as store.ErrStoreClosed, on
// every call, and adds the last failed dial to err, a failure of the store, when no
// dial has succeeded since it: errors.Is then finds both the deadline and
// the dial's cause (syscall.ECONNREFUSED, say). Answers of the store
// (ErrNotHeld, ErrNotObtained, ErrNotReplicated) are left as they are.
func (w *dialWatch) explain(err error) error {
	if err == nil || errors.Is(err, store.ErrNotHeld) || errors.Is(err, store.ErrNotObtained) || errors.Is(err, ErrNotReplicated) {
		return err
	}
	if errors.Is(err, redis.ErrClosed) {
		if !errors.Is(err, store.ErrStoreClosed) {
			err = fmt.Errorf("%w: %w", store.ErrStoreClosed, err)
		}
		return err
	}
	err = silence(err)
	f := w.last.Load()
	if f == nil || time.Since(f.at) > dialMemory || errors.Is(err, f.err) {
		return err
	}
	return fmt.Errorf("%w (Redis unreachable: %w)", err, f.err)
}

// silence says of a socket that timed out which server went silent, and
// makes it a context.DeadlineExceeded, as a deadline that ended a wait
// elsewhere is: go-redis reports a server that stopped answering (paused,
// hung, a link that drops packets) as the socket's "i/o timeout", which no
// errors.Is for a deadline finds.
func silence(err error) error {
	ne, ok := errors.AsType[net.Error](err)
	if !ok || !ne.Timeout() || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	where := "Redis"
	if op, ok := errors.AsType[*net.OpError](err); ok && op.Addr != nil {
		where = "Redis at " + op.Addr.String()
	}
	return fmt.Errorf("%w (%s did not answer before the deadline: %w)", err, where, context.DeadlineExceeded)
}
