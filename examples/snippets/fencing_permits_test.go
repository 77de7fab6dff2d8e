package snippets

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/memorystore"
)

// TestSharedRefusesAHolderOvertakenByNNewer: three permits of a key are
// held and written under; once three newer permits have written, a write
// under the first is refused, while the three newest still write.
func TestSharedRefusesAHolderOvertakenByNNewer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	sem := core.NewLocker(memorystore.New()).Semaphore(3)
	res := NewShared(3)
	var fences []uint64
	for range 4 {
		lk, err := sem.TryObtain(ctx, "export:7")
		if err != nil {
			t.Fatal(err)
		}
		if err := res.Write(lk.Fence(), "start"); err != nil {
			t.Fatalf("write under a fresh permit: %v", err)
		}
		fences = append(fences, lk.Fence())
		if err := lk.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := res.Write(fences[0], "late"); !errors.Is(err, ErrStaleFence) {
		t.Errorf("write under the first of four permits: %v; want ErrStaleFence", err)
	}
	for _, f := range fences[1:] {
		if err := res.Write(f, "again"); err != nil {
			t.Errorf("write under one of the three newest permits: %v", err)
		}
	}
}
