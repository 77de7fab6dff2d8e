package core_test

import (
	"context"
	"errors"
	"testing"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/memorystore"
)

// RefuseInDoubt on a store that cannot mark runs is refused before
// anything runs.
func TestRefuseInDoubtNeedsRunMarks(t *testing.T) {
	m := memorystore.New()
	l := core.NewLocker(recordsOnly{m, m}, core.WithDoubtPolicy(core.RefuseInDoubt))
	_, err := l.Once(context.Background(), "k", 0, func(context.Context) ([]byte, error) {
		t.Fatal("fn ran")
		return nil, nil
	})
	if !errors.Is(err, core.ErrNoRunMarks) {
		t.Fatalf("Once with RefuseInDoubt on a store without marks: %v, want ErrNoRunMarks", err)
	}
}

// recordsOnly is a store that keeps records but marks no runs, as one
// written before RunMarker would.
type recordsOnly struct {
	core.Store
	store.Recorder
}
