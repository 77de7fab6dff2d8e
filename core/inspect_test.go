package core_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/lockertest"
	"github.com/reqlock/reqlock/memorystore"
)

// A free key, a held one, a waiter in line, the hand-over to the waiter and
// the release: what Inspect says at each step, on the memory store (each
// store package checks its own).
func TestInspectLifecycle(t *testing.T) { lockertest.InspectLifecycle(t, lockertest.MemoryInspect()) }

// Inspect changes nothing, on the memory store (each store package checks
// its own, counting its servers' writes).
func TestInspectIsReadOnly(t *testing.T) { lockertest.InspectIsReadOnly(t, lockertest.MemoryInspect()) }

// A store that does not implement Inspector says so.
func TestInspectUnsupportedStore(t *testing.T) {
	l := newLocker(struct{ core.Store }{memorystore.New()})
	h, err := l.Inspect(context.Background(), "k")
	if !errors.Is(err, core.ErrNoInspect) {
		t.Fatalf("%v, want ErrNoInspect", err)
	}
	if skey, _ := l.StoreKey("k"); h.StoreKey != skey {
		t.Fatalf("StoreKey %q, want %q", h.StoreKey, skey)
	}
	if _, err := l.Inspect(context.Background(), ""); !errors.Is(err, core.ErrEmptyKey) {
		t.Fatalf("empty key: %v", err)
	}
}

func TestWithHolderValidatesLabel(t *testing.T) {
	for _, bad := range []string{"", strings.Repeat("a", 65), "pod 1", "pod{1", "pod}1", "tab\t", "nul\x00", "é", "del\x7f"} {
		func() {
			defer func() {
				r := recover()
				if msg, _ := r.(string); !strings.Contains(msg, "WithHolder") {
					t.Errorf("WithHolder(%q): recovered %v, want a panic that names WithHolder", bad, r)
				}
			}()
			core.WithHolder(bad)
		}()
	}
	for _, good := range []string{"a", "pod-1", "web.eu-1", "host:8080/x~y", strings.Repeat("z", 64)} {
		core.WithHolder(good)
	}
}
