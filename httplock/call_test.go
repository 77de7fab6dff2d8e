package httplock_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/memorystore"
)

// metadata is a call's header as an RPC adapter hands it to CallKey.
type metadata map[string][]string

func (m metadata) HeaderValues(name string) []string { return m[name] }
func (metadata) RawQuery() string                    { return "" }

type userKey struct{}

// Every key function an RPC adapter's user writes is httplock's: the
// header (metadata), the context, the request message and their join.
func TestCallKey(t *testing.T) {
	orderID := httplock.FromMessage(func(_ context.Context, msg any) (string, error) {
		if s, _ := msg.(string); s != "" {
			return s, nil
		}
		return "", errors.New("no order ID")
	})
	user := httplock.FromContext(userKey{})
	md := metadata{"Idempotency-Key": {"k1"}, "X-Twice": {"a", "b"}}
	alice := context.WithValue(t.Context(), userKey{}, "alice")
	cases := []struct {
		name    string
		key     httplock.KeyFunc
		ctx     context.Context
		msg     any
		want    string
		wantErr error
	}{
		{"metadata", httplock.FromHeader("idempotency-key"), t.Context(), nil, "k1", nil},
		{"idempotency key", httplock.IdempotencyKey(), t.Context(), nil, "k1", nil},
		{"metadata twice", httplock.FromHeader("x-twice"), t.Context(), nil, "", httplock.ErrMultipleValues},
		{"metadata missing", httplock.FromHeader("x-none"), t.Context(), nil, "", nil},
		{"context", user, alice, nil, "alice", nil},
		{"context missing", user, t.Context(), nil, "", httplock.ErrNoContextValue},
		{"message", orderID, t.Context(), "order-7", "order-7", nil},
		{"message on a stream", orderID, t.Context(), nil, "", httplock.ErrNoMessage},
		{"joined", httplock.Join(user, orderID), alice, "order-7", httplock.JoinKeys("alice", "order-7"), nil},
		{"query", httplock.FromQuery("k"), t.Context(), nil, "", httplock.ErrKeyMisconfigured},
	}
	e, err := httplock.NewCallEngine(httplock.Config{Locker: core.NewLocker(memorystore.New()), Key: httplock.FromHeader("x")})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, err := httplock.NewCallEngine(httplock.Config{Locker: e.Config().Locker, Key: c.key})
			if err != nil {
				t.Fatal(err)
			}
			got, err := e.CallKey(c.ctx, md, c.msg)
			if got != c.want || !errors.Is(err, c.wantErr) || (c.wantErr == nil && err != nil) {
				t.Fatalf("CallKey = %q, %v; want %q, %v", got, err, c.want, c.wantErr)
			}
		})
	}
	if !errors.Is(httplock.ErrNoMessage, httplock.ErrKeyMisconfigured) {
		t.Error("a stream keyed by its message is not the server's mistake")
	}
}

// FromMessage under HTTP middleware finds no message: the server's
// mistake (500, key_misconfigured), never a request that runs unlocked.
func TestFromMessageOutsideAnRPC(t *testing.T) {
	h := httplock.New(httplock.Config{Locker: core.NewLocker(memorystore.New()), Logger: slog.New(slog.DiscardHandler),
		Key: httplock.FromMessage(func(context.Context, any) (string, error) { return "k", nil })})(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		t.Error("the handler ran")
	}))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", nil))
	if rec.Code != http.StatusInternalServerError {
		t.Fatalf("status %d, want 500", rec.Code)
	}
}

// A setting only an HTTP response has is refused by name, never ignored.
func TestCallEngineRefusesHTTPSettings(t *testing.T) {
	l := core.NewLocker(memorystore.New())
	base := httplock.Config{Locker: l, Key: httplock.FromHeader("x")}
	for field, mod := range map[string]func(c *httplock.Config){
		"Respond":       func(c *httplock.Config) { c.Respond = httplock.WriteProblem },
		"WaitBodyLimit": func(c *httplock.Config) { c.WaitBodyLimit = 1 },
		"Replay.RecordStatus": func(c *httplock.Config) {
			c.Replay = &httplock.ReplayConfig{RecordStatus: func(int) bool { return true }}
		},
		"Replay.Headers":        func(c *httplock.Config) { c.Replay = &httplock.ReplayConfig{Headers: []string{"X"}} },
		"Replay.MaxRequestBody": func(c *httplock.Config) { c.Replay = &httplock.ReplayConfig{MaxRequestBody: 1} },
		"Replay.Fingerprint": func(c *httplock.Config) {
			c.Replay = &httplock.ReplayConfig{Fingerprint: func(*http.Request, []byte) []byte { return nil }}
		},
		"Key": func(c *httplock.Config) { c.Key = nil },
	} {
		cfg := base
		mod(&cfg)
		_, err := httplock.NewCallEngine(cfg)
		var ce *httplock.ConfigError
		if !errors.As(err, &ce) || ce.Field != field || !errors.Is(err, httplock.ErrInvalidConfig) {
			t.Errorf("%s: got %v, want a ConfigError naming it", field, err)
		}
	}
	if _, err := httplock.NewCallEngine(base); err != nil {
		t.Fatal(err)
	}
}

// CallScope is the method's full name unless Scope is set.
func TestCallScope(t *testing.T) {
	l := core.NewLocker(memorystore.New())
	for scope, want := range map[string]string{"": "/pkg.Svc/Pay", "payments": "payments"} {
		e, err := httplock.NewCallEngine(httplock.Config{Locker: l, Key: httplock.FromHeader("x"), Scope: scope})
		if err != nil {
			t.Fatal(err)
		}
		if got := e.CallScope("/pkg.Svc/Pay"); got != want {
			t.Errorf("Scope %q: CallScope = %q, want %q", scope, got, want)
		}
	}
}
