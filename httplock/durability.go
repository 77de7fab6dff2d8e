package httplock

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/reqlock/reqlock/core"
)

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
	if !e.cfg.Locker.KeepsRecords() {
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
		durable, detail, err := e.cfg.Locker.RecordsDurable(ctx)
		switch {
		case errors.Is(err, core.ErrNoDurability):
			// The store cannot tell: nothing to say.
		case err != nil:
			lg.Warn("reqlock: cannot tell whether replay records survive a restart of the lock store; if they do not, a request retried after one runs again (Redis: CONFIG GET may be renamed or refused; turn on appendonly)",
				logReason, reasonDurabilityUnknown, "error", err)
		case !durable:
			lg.Warn("reqlock: replay records will not survive a restart of the lock store: a request retried after one runs again (Redis: turn on appendonly)",
				logReason, reasonRecordsNotDurable, "detail", detail)
		}
	}()
}
