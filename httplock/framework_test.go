package httplock_test

import (
	"errors"
	"net/http/httptest"
	"testing"

	"github.com/reqlock/reqlock/httplock"
)

type frameworkCtx struct{ values map[string]any }

// A framework's key functions read the context the adapter put on the
// request; given to another framework's middleware, they find none, and
// that is the server's mistake (500), not a request without a key.
func TestFrameworkContextKeys(t *testing.T) {
	fc := httplock.NewFrameworkContext[*frameworkCtx]("testlock")
	fromContext := fc.Value("FromContext", func(c *frameworkCtx) any { return c.values["user"] })
	r := httptest.NewRequest("POST", "/", nil)

	if _, err := fromContext(r); !errors.Is(err, httplock.ErrKeyMisconfigured) || err.Error() != "reqlock: lock key misconfigured: testlock.FromContext used outside testlock's middleware" {
		t.Fatalf("outside the middleware: %v", err)
	}
	c := &frameworkCtx{values: map[string]any{}}
	if _, err := fromContext(fc.With(r, c)); !errors.Is(err, httplock.ErrNoContextValue) {
		t.Fatalf("no value: %v", err)
	}
	c.values["user"] = 42
	if k, err := fromContext(fc.With(r, c)); k != "42" || err != nil {
		t.Fatalf("value 42: %q, %v", k, err)
	}
	if got, ok := fc.From(fc.With(r, c)); !ok || got != c {
		t.Fatal("From does not return the context With put on the request")
	}
	other := httplock.NewFrameworkContext[*frameworkCtx]("otherlock")
	if _, ok := other.From(fc.With(r, c)); ok {
		t.Fatal("one adapter's carrier finds another's context")
	}
}
