package core_test

import (
	"context"
	"errors"
	"testing"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/memorystore"
)

// The Locker passes the question to its store, and says when the store
// cannot tell (the Redis store's tests check the answer passed on).
func TestLockerRecordsDurable(t *testing.T) {
	ctx := context.Background()
	if _, _, err := core.NewLocker(memorystore.New()).RecordsDurable(ctx); !errors.Is(err, core.ErrNoDurability) {
		t.Fatalf("memory store: %v, want ErrNoDurability", err)
	}
}
