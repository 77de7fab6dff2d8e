package httplock

import (
	"context"
	"log/slog"
	"reflect"
	"sync"
	"time"
	"unsafe"

	"github.com/reqlock/reqlock/core"
)

// recordsDurable is core.Durability: a store that can tell whether its
// records survive its own restart. Replay stands on those records: lost,
// a request retried after the restart runs its handler again.
type recordsDurable interface {
	RecordsDurable(ctx context.Context) (durable bool, detail string, err error)
}

// durabilityOf returns what can tell whether l's records are durable: l
// itself, if it forwards the question to its store, or l's store, when it
// implements core.Durability.
func durabilityOf(l *core.Locker) (recordsDurable, bool) {
	var s any = l
	switch h := s.(type) {
	case recordsDurable:
		return h, true
	case interface{ Store() core.Store }:
		s = h.Store()
	default:
		s = lockerStore(l)
	}
	d, ok := s.(recordsDurable)
	return d, ok
}

// lockerStore is the store l was made with. core.Locker does not hand it
// out (nor forward the durability question to it), so it is read from the
// Locker's own field, without changing anything; nil if core renames that
// field, which TestReplayWarnsOfRecordsLostOnRestart notices.
func lockerStore(l *core.Locker) any {
	f := reflect.ValueOf(l).Elem().FieldByName("store")
	if !f.IsValid() || f.Kind() != reflect.Interface || !f.CanAddr() {
		return nil
	}
	return reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem().Interface()
}

// durabilityChecked holds the (Logger, Locker) pairs whose store was asked:
// every route with replay builds a middleware, and one store's answer is
// one line.
var durabilityChecked sync.Map // durabilityKey → struct{}

type durabilityKey struct {
	lg *slog.Logger
	l  *core.Locker
}

// Reasons of the start-up lines about records.
const (
	reasonRecordsNotDurable = "records_not_durable"
	reasonDurabilityUnknown = "durability_unknown"
)

// durabilityTimeout bounds the start-up question to the store: a store
// that does not answer in that long is not waited for (it is warned about).
const durabilityTimeout = 2 * time.Second

// checkDurability asks the Locker's store, once per Logger and Locker, in
// the background and for at most durabilityTimeout, whether replay records
// survive a restart of the store, and warns when they will not or when it
// cannot tell. It does not hold up the constructor: the store may be
// slow, or not up yet. done is closed when it is over.
func (e *Engine) checkDurability(done chan<- struct{}) {
	d, ok := durabilityOf(e.cfg.Locker)
	if !ok {
		close(done)
		return
	}
	if _, asked := durabilityChecked.LoadOrStore(durabilityKey{e.cfg.Logger, e.cfg.Locker}, struct{}{}); asked {
		close(done)
		return
	}
	lg := e.cfg.Logger
	go func() {
		defer close(done)
		ctx, cancel := context.WithTimeout(context.Background(), durabilityTimeout)
		defer cancel()
		durable, detail, err := d.RecordsDurable(ctx)
		switch {
		case err != nil:
			lg.Warn("reqlock: cannot tell whether replay records survive a restart of the lock store; if they do not, a request retried after one runs again (Redis: CONFIG GET may be renamed or refused; turn on appendonly)",
				logReason, reasonDurabilityUnknown, "error", err)
		case !durable:
			lg.Warn("reqlock: replay records will not survive a restart of the lock store: a request retried after one runs again (Redis: turn on appendonly)",
				logReason, reasonRecordsNotDurable, "detail", detail)
		}
	}()
}
