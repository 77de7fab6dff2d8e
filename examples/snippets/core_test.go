package snippets

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/memorystore"
)

func TestCoreSnippetsRun(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	locker := core.NewLocker(memorystore.New())

	if err := Do(ctx, locker, "o-1"); err != nil {
		t.Errorf("Do: %v", err)
	}
	if err := Once(ctx, locker, "j-1"); err != nil {
		t.Errorf("Once: %v", err)
	}
	if err := Once(ctx, locker, "j-1"); err != nil {
		t.Errorf("Once, replayed: %v", err)
	}
	if err := TryObtain(ctx, locker, "k"); err != nil {
		t.Errorf("TryObtain, free: %v", err)
	}
	held, err := locker.TryObtain(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release(context.Background())
	err = TryObtain(ctx, locker, "k")
	if !errors.Is(err, core.ErrNotObtained) || !strings.Contains(err.Error(), "busy for up to") {
		t.Errorf("TryObtain, held: %v; want ErrNotObtained with the holder's lease", err)
	}
}
