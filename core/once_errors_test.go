package core_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/memorystore"
)

// A Do or a Once whose lock was lost during the run returns an error that is
// both ErrLockLost and the function's own, on one line.
func TestLostLockErrorsSayWhatHappened(t *testing.T) {
	l := core.NewLocker(memorystore.New(), core.WithTTL(50*time.Millisecond), core.WithoutWatchdog())
	errDeclined := errors.New("card declined")
	ctx := context.Background()
	lose := func(ctx context.Context) error {
		<-ctx.Done() // the lease runs out: the lock is lost
		return errDeclined
	}
	check := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, core.ErrLockLost) || !errors.Is(err, errDeclined) {
			t.Fatalf("%s: %v; want both ErrLockLost and the function's error", what, err)
		}
		if strings.Contains(err.Error(), "\n") {
			t.Fatalf("%s: the error %q takes more than one line", what, err)
		}
	}
	check("Do", l.Do(ctx, "do", lose))
	_, err := l.Once(ctx, "once", 0, func(ctx context.Context) ([]byte, error) { return nil, lose(ctx) })
	check("Once", err)
	_, err = l.Once(ctx, "once-final", 0, func(ctx context.Context) ([]byte, error) { return nil, core.Final(lose(ctx)) })
	check("Once, a Final error", err)
}
