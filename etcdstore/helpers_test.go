package etcdstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/etcdstore"
	"github.com/reqlock/reqlock/internal/etcdtest"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// newStore starts one etcd member and returns a store on it and its client.
func newStore(t *testing.T) (*etcdstore.Store, *clientv3.Client) {
	t.Helper()
	cli := etcdtest.Start(t).Client(t)
	return etcdstore.New(cli), cli
}

func ctxFor(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// eventually fails t unless cond holds within d.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", d, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func mustObtain(t *testing.T, l *core.Locker, key string) *core.Lock {
	t.Helper()
	lk, err := l.Obtain(ctxFor(t, 20*time.Second), key)
	if err != nil {
		t.Fatalf("obtain %s: %v", key, err)
	}
	return lk
}
