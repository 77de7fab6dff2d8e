package httplock_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"testing"

	"github.com/reqlock/reqlock/httplock"
)

type ctxKey struct{}

type userID [2]byte

func (u userID) String() string { return "u-" + string(u[:]) }

type account struct{ ID string }

func TestExtractors(t *testing.T) {
	r := httptest.NewRequest("POST", "/orders/42?order=7&dup=1&dup=2&blank=", nil)
	r.Header.Set("X-Key", "hk")
	r.Header["X-Empty"] = []string{""}
	r.Header[httplock.HeaderIdempotencyKey] = []string{""}
	r.Header.Add("X-Twice", "a")
	r.Header.Add("X-Twice", "b")
	r.SetPathValue("id", "42")
	for _, c := range []struct {
		name    string
		f       httplock.KeyFunc
		want    string
		wantErr error
	}{
		{"header", httplock.FromHeader("x-key"), "hk", nil},
		{"header absent", httplock.FromHeader("X-None"), "", nil},
		{"header twice", httplock.FromHeader("X-Twice"), "", httplock.ErrMultipleValues},
		{"query", httplock.FromQuery("order"), "7", nil},
		{"query absent", httplock.FromQuery("none"), "", nil},
		{"query twice", httplock.FromQuery("dup"), "", httplock.ErrMultipleValues},
		{"header empty", httplock.FromHeader("X-Empty"), "", httplock.ErrEmptyValue},
		{"idempotency key empty", httplock.IdempotencyKey(), "", httplock.ErrIdempotencyKeySyntax},
		{"strict idempotency key empty", httplock.StrictIdempotencyKey(), "", httplock.ErrIdempotencyKeySyntax},
		{"query empty", httplock.FromQuery("blank"), "", httplock.ErrEmptyValue},
		{"path", httplock.FromPathValue("id"), "42", nil},
		{"context absent", httplock.FromContext(ctxKey{}), "", httplock.ErrNoContextValue},
		{"first of context absent", httplock.FirstOf(httplock.FromContext(ctxKey{}), httplock.FromQuery("order")), "7", nil},
		{"first of none, context absent", httplock.FirstOf(httplock.FromContext(ctxKey{}), httplock.FromHeader("X-None")), "", httplock.ErrNoContextValue},
		{"join context absent", httplock.Join(httplock.FromContext(ctxKey{}), httplock.FromQuery("order")), "", httplock.ErrNoContextValue},
		{"first of", httplock.FirstOf(httplock.FromHeader("X-None"), httplock.FromQuery("order"), httplock.FromHeader("X-Key")), "7", nil},
		{"first of error", httplock.FirstOf(httplock.FromHeader("X-Twice"), httplock.FromQuery("order")), "", httplock.ErrMultipleValues},
		{"first of none", httplock.FirstOf(httplock.FromHeader("X-None")), "", nil},
		{"join", httplock.Join(httplock.FromPathValue("id"), httplock.FromQuery("order")), "2:421:7", nil},
		{"join missing part", httplock.Join(httplock.FromPathValue("id"), httplock.FromHeader("X-None")), "", nil},
	} {
		got, err := c.f(r)
		if got != c.want || !errors.Is(err, c.wantErr) || (err == nil) != (c.wantErr == nil) {
			t.Errorf("%s: %q, %v; want %q, %v", c.name, got, err, c.want, c.wantErr)
		}
	}
}

func TestKeyOf(t *testing.T) {
	var nilUser *account
	for _, c := range []struct {
		v    any
		want string
		ok   bool
	}{
		{nil, "", true}, {"alice", "alice", true}, {[]byte("b"), "b", true},
		{42, "42", true}, {int64(-7), "-7", true}, {int32(3), "3", true},
		{uint(5), "5", true}, {uint64(6), "6", true}, {uint32(8), "8", true},
		{userID{'x', 'y'}, "u-xy", true}, {(*stringer)(nil), "", true},
		{account{"a"}, "", false}, {nilUser, "", false}, {3.5, "", false},
	} {
		got, err := httplock.KeyOf(c.v)
		if got != c.want || (err == nil) != c.ok || (err != nil && !errors.Is(err, httplock.ErrKeyType)) {
			t.Errorf("KeyOf(%#v) = %q, %v; want %q ok=%v", c.v, got, err, c.want, c.ok)
		}
	}
	r := httptest.NewRequest("GET", "/", nil)
	r = r.WithContext(context.WithValue(r.Context(), ctxKey{}, "alice"))
	if k, err := httplock.FromContext(ctxKey{})(r); k != "alice" || err != nil {
		t.Fatalf("FromContext: %q, %v", k, err)
	}
}

func TestFromContextKeyThatCannotBeSet(t *testing.T) {
	for _, key := range []any{nil, []string{"user"}} {
		func() {
			defer func() {
				if err, _ := recover().(error); !errors.Is(err, httplock.ErrInvalidConfig) {
					t.Errorf("FromContext(%#v): recovered %v, want ErrInvalidConfig", key, err)
				}
			}()
			httplock.FromContext(key)
		}()
	}
}

func TestFromQueryMalformed(t *testing.T) {
	for _, q := range []string{"k=%zz", "k=a;b", "k=1&other=%zz", "k=1;k=2"} {
		r := httptest.NewRequest("POST", "/", nil)
		r.URL.RawQuery = q
		if k, err := httplock.FromQuery("k")(r); k != "" || !errors.Is(err, httplock.ErrQuerySyntax) {
			t.Errorf("?%s: %q, %v; want ErrQuerySyntax", q, k, err)
		}
	}
}

type stringer struct{ s string }

func (s *stringer) String() string { return s.s }

// JoinKeys spells out the key Join makes of the same parts.
func TestJoinKeys(t *testing.T) {
	r := httptest.NewRequest("POST", "/?a=user-42&b=pay-1", nil)
	joined, err := httplock.Join(httplock.FromQuery("a"), httplock.FromQuery("b"))(r)
	if err != nil || joined != httplock.JoinKeys("user-42", "pay-1") || joined != "7:user-425:pay-1" {
		t.Fatalf("Join: %q, %v; JoinKeys: %q", joined, err, httplock.JoinKeys("user-42", "pay-1"))
	}
	if httplock.JoinKeys("a:", "b") == httplock.JoinKeys("a", ":b") {
		t.Fatal("different parts joined into one key")
	}
}
