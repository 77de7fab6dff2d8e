package snippets

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/memorystore"
)

// ExportRoute admits two exports of a user at once: with two permits of
// alice's key held, her third gets 429 limit_reached, and bob's runs.
func TestExportRouteAdmitsTwoPerUser(t *testing.T) {
	locker := core.NewLocker(memorystore.New())
	srv := httptest.NewServer(ExportRoute(locker))
	defer srv.Close()
	defer http.DefaultClient.CloseIdleConnections()
	ctx := context.Background()
	sem := locker.Semaphore(2)
	key := httplock.LockKey("POST /exports", "alice")
	for range 2 {
		permit, err := sem.TryObtain(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		defer permit.Release(ctx)
	}
	if a := post(t, srv.URL+"/exports", "alice", ""); a.status != http.StatusTooManyRequests || a.ctype != httplock.ContentTypeProblem {
		t.Errorf("alice's third export: %d %s %q, want 429 problem+json", a.status, a.ctype, a.body)
	}
	if a := post(t, srv.URL+"/exports", "bob", ""); a.status != http.StatusAccepted {
		t.Errorf("bob's export: %d %q, want 202", a.status, a.body)
	}
}
