package snippets

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/memorystore"
)

// frameworks are the README's four framework sections.
var frameworks = []struct {
	name string
	mux  func(*core.Locker) http.Handler
}{
	{"net/http", NetHTTP},
	{"gin", Gin},
	{"echo", Echo},
	{"echo5", Echo5},
}

type answer struct {
	status   int
	body     string
	replayed string
	ctype    string
}

func post(t *testing.T, url, user, idemKey string) answer {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"amount":100}`))
	if err != nil {
		t.Fatal(err)
	}
	if user != "" {
		req.Header.Set("Authorization", "Bearer "+user)
	}
	if idemKey != "" {
		req.Header.Set(httplock.HeaderIdempotencyKey, idemKey)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{resp.StatusCode, string(body), resp.Header.Get(httplock.HeaderIdempotentReplayed), resp.Header.Get("Content-Type")}
}

// TestFrameworkSnippetsDoWhatTheREADMESays runs each section's routes on the
// memory store: a payment retried with the same user and Idempotency-Key is
// replayed, another user's same key runs, a payment without a key gets 400
// as problem+json, and orders run.
func TestFrameworkSnippetsDoWhatTheREADMESays(t *testing.T) {
	for _, fw := range frameworks {
		t.Run(fw.name, func(t *testing.T) {
			srv := httptest.NewServer(fw.mux(core.NewLocker(memorystore.New())))
			defer srv.Close()
			defer srv.Client().CloseIdleConnections()
			defer http.DefaultClient.CloseIdleConnections()

			first := post(t, srv.URL+"/payments", "alice", "pay-1")
			if first.status != http.StatusCreated || first.replayed != "" {
				t.Fatalf("first payment: %+v; want 201, not replayed", first)
			}
			retry := post(t, srv.URL+"/payments", "alice", `"pay-1"`)
			if retry.status != http.StatusCreated || retry.body != first.body || retry.replayed != "true" {
				t.Errorf("retried payment: %+v; want the first (%q) replayed", retry, first.body)
			}
			other := post(t, srv.URL+"/payments", "bob", "pay-1")
			if other.status != http.StatusCreated || other.body == first.body || other.replayed != "" {
				t.Errorf("another user's payment with the same key: %+v; want a run of its own", other)
			}
			noKey := post(t, srv.URL+"/payments", "alice", "")
			if noKey.status != http.StatusBadRequest || !strings.HasPrefix(noKey.ctype, "application/problem+json") {
				t.Errorf("payment without Idempotency-Key: %+v; want 400 problem+json", noKey)
			}
			order := post(t, srv.URL+"/orders", "alice", "")
			if order.status != http.StatusCreated || !strings.HasPrefix(order.body, "ord_") {
				t.Errorf("order: %+v; want 201", order)
			}
			if got := post(t, srv.URL+"/orders", "", ""); got.status != http.StatusUnauthorized {
				t.Errorf("order without a user: %+v; want auth's 401", got)
			}
		})
	}
}

// TestReplayOptionsIgnoreTheQuery: the fingerprint in docs/replay.md leaves
// the query out, so a retry with another query is replayed, and one with
// another body gets 422.
func TestReplayOptionsIgnoreTheQuery(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("POST /payments", auth(ReplayOptions(core.NewLocker(memorystore.New()))(http.HandlerFunc(pay))))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	defer http.DefaultClient.CloseIdleConnections()

	first := post(t, srv.URL+"/payments?trace=1", "alice", "pay-9")
	again := post(t, srv.URL+"/payments?trace=2", "alice", "pay-9")
	if first.status != http.StatusCreated || again.body != first.body || again.replayed != "true" {
		t.Errorf("first %+v, again with another query %+v; want the first replayed", first, again)
	}
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/payments", strings.NewReader(`{"amount":999}`))
	req.Header.Set("Authorization", "Bearer alice")
	req.Header.Set(httplock.HeaderIdempotencyKey, "pay-9")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnprocessableEntity {
		t.Errorf("another body with the same key: %d; want 422", resp.StatusCode)
	}
}
