package httplock_test

import (
	"context"
	"errors"
	"testing"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/internal/httpcases"
	"github.com/reqlock/reqlock/memorystore"
)

// errInvalid is a handler's own failure, as a unary RPC's status error.
var errInvalid = errors.New("invalid argument: amount")

// ServeRecorded's promise for a run that fails: "nothing is recorded and a
// retry runs it again". Under RefuseInDoubt the failed run, which ended
// with its lock held, must not leave the key in doubt: the retry runs.
func TestServeRecordedErrorIsNoDoubt(t *testing.T) {
	l := core.NewLocker(memorystore.New(), core.WithLogger(httpcases.Quiet))
	e, err := httplock.NewEngine(httplock.Config{Locker: l, Logger: httpcases.Quiet,
		Replay: &httplock.ReplayConfig{InDoubt: core.RefuseInDoubt}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_, _, rej := e.ServeRecorded(ctx, "s", "k", nil, []byte("fp"), func(context.Context) ([]byte, error) { return nil, errInvalid })
	if rej != nil {
		t.Fatalf("the failing run: %v", rej)
	}
	ran := false
	_, _, rej = e.ServeRecorded(ctx, "s", "k", nil, []byte("fp"), func(context.Context) ([]byte, error) { ran = true; return []byte("ok"), nil })
	if rej != nil || !ran {
		t.Fatalf("the retry of a run that failed: %v, ran %v; want it run", rej, ran)
	}
}

// In the store's unit (pgstore.WithTx), a run that fails is rolled back,
// and the adapter answers with the handler's own error: the engine has no
// rejection for it (no 500 not_committed in place of InvalidArgument).
func TestServeRecordedErrorInUnitIsTheHandlers(t *testing.T) {
	e, _, _ := unitEngine(t, httplock.ReplayConfig{})
	_, replayed, rej := e.ServeRecorded(context.Background(), "s", "k", nil, []byte("fp"),
		func(context.Context) ([]byte, error) { return nil, errInvalid })
	if rej != nil || replayed {
		t.Fatalf("a run that failed in the unit: replayed %v, %v; want no rejection: the handler's error is the answer", replayed, rej)
	}
}
