package httplock_test

import (
	"context"
	"errors"
	"testing"

	"github.com/reqlock/reqlock/httplock"
)

// mapView is a request that is not net/http's: headers by canonical name.
type mapView struct {
	header map[string][]string
	query  string
}

func (v mapView) HeaderValues(name string) []string { return v.header[name] }
func (v mapView) RawQuery() string                  { return v.query }

type viewCtxKey struct{}

// httplock's key functions read a View through its RequestView, the same
// way as they read an *http.Request: one Config for every framework.
func TestViewKeys(t *testing.T) {
	fc := httplock.NewFrameworkContext[*frameworkCtx]("testlock")
	c := &frameworkCtx{values: map[string]any{"user": "alice"}}
	ctx := context.WithValue(context.Background(), viewCtxKey{}, 7)
	v := mapView{
		header: map[string][]string{"X-Key": {"k1"}, "Idempotency-Key": {`"pay-1"`}, "X-Two": {"a", "b"}},
		query:  "order=9&bad=%zz",
	}
	r := fc.View(ctx, "POST", c, v)
	if r.Method != "POST" {
		t.Fatalf("method %q", r.Method)
	}
	for _, tc := range []struct {
		name string
		key  httplock.KeyFunc
		want string
		err  error
	}{
		{"FromHeader", httplock.FromHeader("x-key"), "k1", nil},
		{"FromHeader absent", httplock.FromHeader("X-None"), "", nil},
		{"FromHeader twice", httplock.FromHeader("X-Two"), "", httplock.ErrMultipleValues},
		{"IdempotencyKey", httplock.IdempotencyKey(), "pay-1", nil},
		{"StrictIdempotencyKey", httplock.StrictIdempotencyKey(), "pay-1", nil},
		{"FromContext", httplock.FromContext(viewCtxKey{}), "7", nil},
		{"framework Value", fc.Value("FromContext", func(c *frameworkCtx) any { return c.values["user"] }), "alice", nil},
		{"Join", httplock.Join(httplock.FromHeader("X-Key"), httplock.IdempotencyKey()), httplock.JoinKeys("k1", "pay-1"), nil},
		{"FromPathValue", httplock.FromPathValue("id"), "", httplock.ErrKeyMisconfigured},
	} {
		got, err := tc.key(r)
		if got != tc.want || !errors.Is(err, tc.err) || (tc.err == nil && err != nil) {
			t.Errorf("%s: %q, %v; want %q, %v", tc.name, got, err, tc.want, tc.err)
		}
	}
	// The query is parsed as net/http's is: strictly.
	if _, err := httplock.FromQuery("order")(r); !errors.Is(err, httplock.ErrQuerySyntax) {
		t.Errorf("FromQuery on a bad query: %v", err)
	}
	r = fc.View(ctx, "POST", c, mapView{query: "order=9"})
	if k, err := httplock.FromQuery("order")(r); k != "9" || err != nil {
		t.Errorf("FromQuery: %q, %v", k, err)
	}
	if got, ok := fc.From(r); !ok || got != c {
		t.Error("From does not find the framework context on a View")
	}
	if _, ok := httplock.NewFrameworkContext[*frameworkCtx]("otherlock").From(r); ok {
		t.Error("another adapter's carrier finds this one's context")
	}
}
