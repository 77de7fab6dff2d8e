package redlock_test

import (
	"errors"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/redisstore/redlock"
)

// Redlock refuses records plainly.
func TestRedlockKeepsNoRecords(t *testing.T) {
	srvs := redistest.StartN(t, 3)
	s := redlock.New(srvs[0].Client(t), srvs[1].Client(t), srvs[2].Client(t))
	l := newLocker(s)
	if l.KeepsRecords() {
		t.Fatal("KeepsRecords on Redlock")
	}
	if _, _, err := l.TryObtainOrRecord(ctxT(t, 5*time.Second), "k"); !errors.Is(err, core.ErrNoRecords) {
		t.Fatalf("TryObtainOrRecord on Redlock: %v, want ErrNoRecords", err)
	}
}
