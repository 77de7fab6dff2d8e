package httplock_test

import (
	"errors"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/internal/httpcases"
	"github.com/reqlock/reqlock/memorystore"
)

func TestNewEngineRejectsBadConfig(t *testing.T) {
	l := core.NewLocker(memorystore.New())
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
		got.Logger == nil || got.Respond == nil || got.Limit != 1 {
		t.Fatalf("defaults not filled: %+v", got)
	}
}

// Every checked field is named in the error, with what is wrong with it, so
// that a panic at start-up says which line of the config to fix.
func TestConfigErrorNamesTheField(t *testing.T) {
	l := core.NewLocker(memorystore.New())
	for want, cfg := range map[string]httplock.Config{
		"httplock: Config.Locker is nil":                                                         {},
		"httplock: Config.Mode is unknown (Mode(7))":                                             {Locker: l, Mode: httplock.Mode(7)},
		"httplock: Config.MaxWait is negative (-1s)":                                             {Locker: l, MaxWait: -time.Second},
		"httplock: Config.RetryAfter is negative (-1ns)":                                         {Locker: l, RetryAfter: -1},
		"httplock: Config.StoreTimeout is negative (-2ms)":                                       {Locker: l, StoreTimeout: -2 * time.Millisecond},
		"httplock: Config.Replay.Retention is negative (-1h0m0s)":                                {Locker: l, Replay: &httplock.ReplayConfig{Retention: -time.Hour}},
		"httplock: Config.Replay.MaxResponseBody is negative (-1)":                               {Locker: l, Replay: &httplock.ReplayConfig{MaxResponseBody: -1}},
		"httplock: Config.Replay.MaxRequestBody is negative (-5)":                                {Locker: l, Replay: &httplock.ReplayConfig{MaxRequestBody: -5}},
		"httplock: Config.Limit is negative (-2)":                                                {Locker: l, Limit: -2},
		"httplock: Config.Limit is 2 with Replay set: replay runs one request per key at a time": {Locker: l, Limit: 2, Replay: &httplock.ReplayConfig{}},
	} {
		_, err := httplock.NewEngine(cfg)
		var ce *httplock.ConfigError
		switch {
		case err == nil:
			t.Errorf("%s: no error", want)
		case err.Error() != want:
			t.Errorf("error %q, want %q", err, want)
		case !errors.Is(err, httplock.ErrInvalidConfig) || !errors.As(err, &ce):
			t.Errorf("%s: %v is not a ConfigError wrapping ErrInvalidConfig", want, err)
		}
	}
}

// New panics with the same message: it is what a developer reads.
func TestNewPanicNamesTheField(t *testing.T) {
	httpcases.CheckConfigPanics(t, "", func(c httplock.Config) { httplock.New(c) })
}

func TestModeString(t *testing.T) {
	if httplock.Reject.String() != "reject" || httplock.Wait.String() != "wait" || httplock.Mode(9).String() != "Mode(9)" {
		t.Fatal("Mode.String")
	}
}
