package httplock

import (
	"context"
	"fmt"
	"net/http"
)

// FrameworkContext carries a framework's per-request context (a
// *gin.Context, an echo.Context) on the request an adapter hands to
// Config.Key and Config.Respond, so that every framework takes the same
// Config and its key functions are plain KeyFuncs. An adapter makes one, as
// a package variable, and builds its key functions on it; see
// docs/adapters.md.
type FrameworkContext[C any] struct {
	// adapter names the adapter in errors: "ginlock".
	adapter string
}

// NewFrameworkContext returns the carrier of adapter's framework context.
func NewFrameworkContext[C any](adapter string) *FrameworkContext[C] {
	return &FrameworkContext[C]{adapter: adapter}
}

// With returns r carrying c, for the key function and Respond only: the
// engine and the handler keep r.
func (f *FrameworkContext[C]) With(r *http.Request, c C) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), f, c))
}

// From returns the framework context r carries, if any.
func (f *FrameworkContext[C]) From(r *http.Request) (C, bool) {
	c, ok := r.Context().Value(f).(C)
	return c, ok
}

// Key returns a KeyFunc that reads the key from the framework context with
// get. A request that carries none (the KeyFunc given to another
// framework's middleware) is the server's mistake: ErrKeyMisconfigured,
// answered 500 and logged.
func (f *FrameworkContext[C]) Key(name string, get func(c C) (string, error)) KeyFunc {
	return func(r *http.Request) (string, error) {
		c, ok := f.From(r)
		if !ok {
			return "", fmt.Errorf("%w: %s.%s used outside %[2]s's middleware", ErrKeyMisconfigured, f.adapter, name)
		}
		return get(c)
	}
}

// Value returns a KeyFunc for a value that earlier middleware stored on the
// framework context, as get finds it: it goes through KeyOf, and nil is
// ErrNoContextValue, as for FromContext.
func (f *FrameworkContext[C]) Value(name string, get func(c C) any) KeyFunc {
	return f.Key(name, func(c C) (string, error) {
		if v := get(c); v != nil {
			return KeyOf(v)
		}
		return "", ErrNoContextValue
	})
}
