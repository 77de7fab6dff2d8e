package pgstore_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/reqlock/reqlock/backoff"
	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/internal/httpcases"
	"github.com/reqlock/reqlock/internal/httpcases/frameworks"
	"github.com/reqlock/reqlock/internal/pgtest"
	"github.com/reqlock/reqlock/pgstore"
)

// Replay under WithTx, over HTTP on every framework, with two instances of
// the app on one database: the first instance's handler inserts the
// payment through pgstore.Tx and is paused, before its commit, for three
// leases (its watchdog paused with it), while the retry goes to the second
// instance. The paused holder cannot commit, so its client gets 503
// not_committed; the retry runs once the paused transaction ends; a third
// request replays the retry's response. Exactly one row, run after run.
func TestReplayWithTxPausedInstance(t *testing.T) {
	const runs = 3
	pool, s := paymentsDB(t, pgstore.WithTx())
	for _, fw := range frameworks.All {
		t.Run(fw.Name, func(t *testing.T) {
			resume := make(chan struct{})
			paused := make(chan struct{}, 1)
			h := payHandler(t, func(r *http.Request) {
				if r.Header.Get(pauseHeader) != "" {
					paused <- struct{}{}
					<-resume
				}
			})
			first := servePay(t, fw, core.NewLocker(s, core.WithLogger(httpcases.Quiet), core.WithoutWatchdog(), core.WithTTL(payLease)), h, core.RunAgain)
			other := servePay(t, fw, core.NewLocker(s, core.WithLogger(httpcases.Quiet), core.WithRetry(backoff.Constant(20*time.Millisecond))), h, core.RunAgain)
			for i := range runs {
				key := fmt.Sprintf("%s-%d", fw.Name, i)
				firstDone := make(chan payResult, 1)
				go func() { firstDone <- pay(t, first, key, pauseHeader, "1") }()
				<-paused
				retryDone := make(chan payResult, 1)
				go func() { retryDone <- pay(t, other, key) }()
				time.Sleep(3 * payLease) // paused past the lease, the retry waiting
				resume <- struct{}{}
				got, retry := <-firstDone, <-retryDone
				if got.status != http.StatusServiceUnavailable || got.code != "not_committed" {
					t.Fatalf("run %d: the paused instance's client got %d %q; want 503 not_committed", i, got.status, got.code)
				}
				if retry.status != http.StatusCreated || retry.replayed {
					t.Fatalf("run %d: the retry got %d (replayed %v) %s; want a fresh 201", i, retry.status, retry.replayed, retry.body)
				}
				if again := pay(t, other, key); !again.replayed || again.body != retry.body {
					t.Fatalf("run %d: a third request got %d %s (replayed %v); want the retry's response replayed", i, again.status, again.body, again.replayed)
				}
				if n := payments(t, pool, key); n != 1 {
					t.Fatalf("run %d: %d payments committed, want exactly 1", i, n)
				}
			}
		})
	}
}

// The lease of the paused instance, and the header that pauses its handler.
const (
	payLease    = 300 * time.Millisecond
	pauseHeader = "X-Pause"
)

// paymentsDB is a fresh database with reqlock's tables and a payments
// table, and a store on it with opts.
func paymentsDB(t *testing.T, opts ...pgstore.Option) (*pgxpool.Pool, *pgstore.Store) {
	t.Helper()
	pool := pgtest.OpenPool(t, pgtest.Shared(t).NewDatabase(t))
	ctx := context.Background()
	if err := pgstore.New(pool).Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, "CREATE TABLE payments (job text NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	return pool, pgstore.New(pool, opts...)
}

// payHandler inserts a payment for the request's Idempotency-Key through
// the store's transaction, calls gap between the INSERT and the commit,
// and answers 201 with a fresh id.
func payHandler(t *testing.T, gap func(*http.Request)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tx, ok := pgstore.Tx(r.Context())
		if !ok {
			t.Error("no transaction on the handler's context under WithTx")
			http.Error(w, "no transaction", http.StatusInternalServerError)
			return
		}
		key, _ := strconv.Unquote(r.Header.Get(httplock.HeaderIdempotencyKey))
		if _, err := tx.Exec(r.Context(), "INSERT INTO payments (job) VALUES ($1)", key); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		gap(r)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, `{"payment":%q}`, rand.Text())
	})
}

// servePay serves POST /pay on fw, keyed by the user and the
// Idempotency-Key, with Replay over l, and returns its URL.
func servePay(t *testing.T, fw httpcases.Framework, l *core.Locker, h http.Handler, policy core.DoubtPolicy) string {
	return fw.Serve(t, []httpcases.Route{{
		Method: "POST", Path: "/pay",
		Lock: httplock.Config{Locker: l, Mode: httplock.Wait, MaxWait: 20 * time.Second, StoreTimeout: 10 * time.Second, Logger: httpcases.Quiet,
			Replay: &httplock.ReplayConfig{InDoubt: policy}},
		Key:     httpcases.KeySource{Kind: httpcases.FromUserAndIdempotencyKey},
		Handler: h,
	}}) + "/pay"
}

type payResult struct {
	status   int
	code     string // the problem's
	replayed bool
	body     string
}

// pay sends one payment for key, as alice, with more headers (name, value…).
func pay(t *testing.T, url, key string, hdr ...string) payResult {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", url, nil)
	req.Header.Set(httpcases.UserHeader, "alice")
	req.Header.Set(httplock.HeaderIdempotencyKey, strconv.Quote(key))
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return payResult{}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	r := payResult{status: resp.StatusCode, replayed: resp.Header.Get(httplock.HeaderIdempotentReplayed) == "true", body: string(b)}
	if resp.Header.Get("Content-Type") == httplock.ContentTypeProblem {
		r.code = httpcases.Result{Body: b}.Problem().Code
	}
	return r
}
