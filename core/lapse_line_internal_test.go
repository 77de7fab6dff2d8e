package core

import (
	"context"
	"testing"
	"time"

	"github.com/reqlock/reqlock/memorystore"
)

// A waiter in line that takes a key whose lease ran out fires its last
// holder's Lost before it holds the key, however late that holder's timer.
func TestMemoryLapseFiresLostForWaiterInLine(t *testing.T) {
	ctx := context.Background()
	st := memorystore.New()
	_, lk := lapsingHolder(t, st, 50*time.Millisecond)
	other := NewLocker(st, quietLogger())

	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	next, err := other.Obtain(wctx, "k") // waits in line past the lease
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = next.Release(ctx) }()
	mustBeLost(t, lk, "a waiter in line holds the key and its last holder's Lost has not fired")
	select {
	case <-next.Lost():
		t.Fatal("the new holder's Lost fired")
	default:
	}
}

// A release that hands the key to a waiter in line, and locks renewed by
// Refresh, never fire anyone's Lost.
func TestMemoryLapseNotFiredByHandOffOrRefresh(t *testing.T) {
	ctx := context.Background()
	st := memorystore.New()
	a := NewLocker(st, WithTTL(100*time.Millisecond), quietLogger())
	b := NewLocker(st, WithTTL(100*time.Millisecond), quietLogger())
	first, err := a.TryObtain(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Refresh(ctx, 200*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	got := make(chan *Lock, 1)
	go func() {
		wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		lk, err := b.Obtain(wctx, "k")
		if err != nil {
			t.Error(err)
		}
		got <- lk
	}()
	time.Sleep(20 * time.Millisecond) // b stands in line
	if err := first.Release(ctx); err != nil {
		t.Fatal(err)
	}
	second := <-got
	if second == nil {
		return
	}
	// Well past the first lease: renewed by the watchdog meanwhile.
	time.Sleep(250 * time.Millisecond)
	if err := second.Refresh(ctx, 100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	third, err := a.TryObtain(ctx, "k")
	if err == nil {
		_ = third.Release(ctx)
		t.Fatal("the key was taken from a renewed holder")
	}
	select {
	case <-first.Lost():
		t.Error("a released lock's Lost fired")
	default:
	}
	select {
	case <-second.Lost():
		t.Error("a lock handed over and renewed lost")
	default:
	}
	if err := second.Release(ctx); err != nil {
		t.Fatal(err)
	}
}
