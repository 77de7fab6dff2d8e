package snippets

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
)

// export stands in for the work a permit guards.
func export(ctx context.Context, user string) error { return ctx.Err() }

// Exports is docs/semaphore.md's first example and the README's "At most
// N per key": at most two exports per user at a time, on every instance.
func Exports(ctx context.Context, locker *core.Locker, user string) error {
	exports := locker.Semaphore(2) // make it once and share it, as the Locker

	err := exports.Do(ctx, "export:"+user, func(ctx context.Context) error {
		return export(ctx, user) // ctx ends with cause core.ErrLockLost if the permit is lost
	})
	if d, ok := core.HolderTTL(err); ok && errors.Is(err, core.ErrNotObtained) {
		_ = d // two exports ran until ctx ended; the first permit may free within d
	}
	return err
}

// TryExport is docs/semaphore.md's refusal: one attempt, and a full key
// says when a permit may free up, for a Retry-After.
func TryExport(ctx context.Context, exports *core.Semaphore, user string) (retryAfter time.Duration, err error) {
	permit, err := exports.TryObtain(ctx, "export:"+user)
	if errors.Is(err, core.ErrNotObtained) {
		d, _ := core.HolderTTL(err) // the shortest lease left among the holders
		return d, err
	}
	if err != nil {
		return 0, err // core.ErrUnavailable, core.ErrSemaphoreUnsupported, …
	}
	defer permit.Release(context.WithoutCancel(ctx))
	return 0, export(ctx, user)
}

// PlanLimits is docs/semaphore.md's limits per call: one key, a limit per
// plan.
func PlanLimits(locker *core.Locker) map[string]*core.Semaphore {
	return map[string]*core.Semaphore{
		"free": locker.Semaphore(1), // admitted while no export of the user runs
		"pro":  locker.Semaphore(5), // admitted while fewer than five run, free ones included
	}
}

// exportHandler runs an export for the user on the request's context.
func exportHandler(w http.ResponseWriter, r *http.Request) {
	user, _ := r.Context().Value(userKey{}).(string)
	if err := export(r.Context(), user); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusAccepted)
}

// ExportRoute is docs/semaphore.md's "On an HTTP route": at most two
// exports per user at once, across every instance; a third gets 429.
func ExportRoute(locker *core.Locker) http.Handler {
	mux := http.NewServeMux()
	exports := httplock.New(httplock.Config{
		Locker: locker,
		Key:    httplock.FromContext(userKey{}), // per user
		Limit:  2,                               // at most two exports per user at once
	})
	mux.Handle("POST /exports", auth(exports(http.HandlerFunc(exportHandler))))
	return mux
}
