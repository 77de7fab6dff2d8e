package core_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/memorystore"
)

// With units, a Once whose lock was lost during its run records nothing,
// returns ErrLockLost, and leaves nothing in doubt: the next Once runs,
// even under RefuseInDoubt.
func TestOnceInUnitLostLock(t *testing.T) {
	s := memorystore.New().WithUnits()
	l := core.NewLocker(s, core.WithTTL(50*time.Millisecond), core.WithoutWatchdog())
	ctx := context.Background()
	_, err := l.Once(ctx, "pay", 0, func(ctx context.Context) ([]byte, error) {
		<-ctx.Done()
		return []byte("paid"), nil
	})
	if !errors.Is(err, core.ErrLockLost) {
		t.Fatalf("Once in a unit whose lock was lost: %v, want ErrLockLost", err)
	}
	refuse := core.NewLocker(s, core.WithDoubtPolicy(core.RefuseInDoubt))
	runs := 0
	out, err := refuse.Once(ctx, "pay", 0, func(context.Context) ([]byte, error) { runs++; return []byte("paid"), nil })
	if err != nil || out.Replayed || out.InDoubt || runs != 1 {
		t.Fatalf("Once after a unit rolled back: %+v, %v, %d runs; want one plain run", out, err, runs)
	}
}
