package httplock_test

import (
	"errors"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
)

func TestNewEngineRejectsBadConfig(t *testing.T) {
	l := core.NewLocker(core.NewMemoryStore())
	for name, cfg := range map[string]httplock.Config{
		"nil locker":       {},
		"unknown mode":     {Locker: l, Mode: httplock.Mode(7)},
		"negative wait":    {Locker: l, MaxWait: -time.Second},
		"negative timeout": {Locker: l, StoreTimeout: -1},
		"negative hint":    {Locker: l, RetryAfter: -1},
	} {
		if _, err := httplock.NewEngine(cfg); !errors.Is(err, httplock.ErrInvalidConfig) {
			t.Errorf("%s: %v, want ErrInvalidConfig", name, err)
		}
	}
	e, err := httplock.NewEngine(httplock.Config{Locker: l})
	if err != nil {
		t.Fatal(err)
	}
	got := e.Config()
	if got.MaxWait != httplock.DefaultMaxWait || got.MaxWaiters != httplock.DefaultMaxWaiters ||
		got.RetryAfter != httplock.DefaultRetryAfter || got.StoreTimeout != httplock.DefaultStoreTimeout ||
		got.Logger == nil || got.Respond == nil {
		t.Fatalf("defaults not filled: %+v", got)
	}
}

func TestNewPanicsWithoutKey(t *testing.T) {
	defer func() {
		err, _ := recover().(error)
		if !errors.Is(err, httplock.ErrInvalidConfig) {
			t.Fatalf("recovered %v, want ErrInvalidConfig", err)
		}
	}()
	httplock.New(httplock.Config{Locker: core.NewLocker(core.NewMemoryStore())})
}

func TestModeString(t *testing.T) {
	if httplock.Reject.String() != "reject" || httplock.Wait.String() != "wait" || httplock.Mode(9).String() != "Mode(9)" {
		t.Fatal("Mode.String")
	}
}
