package node

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/internal/redistest"
)

func TestNormalAddr(t *testing.T) {
	for in, want := range map[string]string{
		"127.0.0.1:7000":   "127.0.0.1:7000",
		"::1:7000":         "[::1]:7000", // as Redis writes it in MOVED
		"[::1]:7000":       "[::1]:7000", // as go-redis writes it
		"fe80::1%lo0:6379": "[fe80::1%lo0]:6379",
		"redis-a:6379":     "redis-a:6379",
		"":                 "",
	} {
		if got := normalAddr(in); got != want {
			t.Errorf("normalAddr(%q) = %q, want %q", in, got, want)
		}
	}
}

// A node client kept from an earlier redirect that the cluster client has
// closed since (the node left the cluster for a while) is looked up afresh,
// instead of failing the acquire with redis.ErrClosed; the lookup is no
// redirect, so a client that allows one still gets there.
func TestClusterReplicaAcksClosedNodeClient(t *testing.T) {
	cl := redistest.StartCluster(t, 3)
	opts := redistest.ClusterOptions(cl.Addrs)
	opts.MaxRedirects = 1
	cc := redis.NewClusterClient(opts)
	t.Cleanup(func() { _ = cc.Close() })
	s := New(cc).WithReplicaAcks(1, 5*time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	refused := func(key string) {
		t.Helper()
		_, err := s.Acquire(ctx, store.Lease{Key: key, Token: "tok", TTL: 10 * time.Second})
		if !errors.Is(err, ErrNotReplicated) { // this cluster has no replicas
			t.Fatalf("Acquire(%s): %v, want ErrNotReplicated", key, err)
		}
	}
	refused("a:{closed}") // the client learns the slot map

	slot, owner := cl.KeyOwner(t, "{closed}")
	next := cl.Others(owner)[0]
	closed := redis.NewClient(&redis.Options{Addr: next.Addr})
	_ = closed.Close()
	s.acks.nodes.Store(normalAddr(next.Addr), closed)

	cl.MoveSlot(t, slot, next)
	refused("b:{closed}") // MOVED to next, whose kept client is closed
	if c, ok := s.acks.nodes.Load(normalAddr(next.Addr)); !ok || c == closed {
		t.Fatalf("the closed client for %s is still kept", next.Addr)
	}
}
