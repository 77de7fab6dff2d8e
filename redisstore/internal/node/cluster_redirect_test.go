package node

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/core/storetest/faultproxy"
	"github.com/reqlock/reqlock/internal/redistest"
)

// A ClusterClient made the ordinary way has MaxRetries 0, which go-redis
// turns into -1: a client that never resends. Yet the cluster client's own
// loop (MaxRedirects, 3 by default) sends a command again after a read
// timeout whatever MaxRetries says, and the store hands its calls to that
// loop after a MOVED (a slot moved since the client last looked). Such an
// acquire counts as resent: its release leaves the cancel marker, and the
// first copy, held on the wire, takes nothing when it lands after it.
func TestClusterRedirectedAcquireLandingLateTakesNothing(t *testing.T) {
	cl := redistest.StartCluster(t, 3)
	const key = "reqlock:{moved-late}"
	slot, owner := cl.KeyOwner(t, key)
	target := cl.Others(owner)[0]
	p := faultproxy.Start(t, target.Addr)

	opts := redistest.ClusterOptions(cl.Addrs) // MaxRetries left as a user leaves it
	opts.ReadTimeout = 300 * time.Millisecond
	opts.Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if addr == target.Addr {
			addr = p.Addr() // only the slot's new owner is behind the proxy
		}
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
	cc := redis.NewClusterClient(opts)
	t.Cleanup(func() { _ = cc.Close() })
	direct := target.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cc.ForEachShard(ctx, func(ctx context.Context, n *redis.Client) error { return LoadScripts(ctx, n) }); err != nil {
		t.Fatal(err)
	}
	// The cluster client asks a node for COMMAND on first use: done now, so
	// that the command held below is the acquire.
	if err := cc.Get(ctx, key).Err(); err != redis.Nil {
		t.Fatal(err)
	}
	s := New(cc)
	if s.resends {
		t.Fatal("the store takes this client for one that resends: the scene is not the one meant")
	}

	cl.MoveSlot(t, slot, target) // the client still thinks owner has it
	l := store.Lease{Key: key, Token: "redirected", TTL: 10 * time.Second}
	type answer struct {
		g   store.Grant
		err error
	}
	done := make(chan answer, 1)
	go func() {
		g, err := s.Acquire(ctx, l)
		done <- answer{g, err}
	}()
	// The slot's new owner also gets the cluster client's slot map reloads
	// and a fresh connection's handshake: those pass, the acquire is held.
	h := holdScript(t, p)
	a := <-done
	g, err := a.g, a.err
	if err != nil {
		t.Fatalf("Acquire: %v (the cluster client did not send it again?)", err)
	}
	if err := s.Release(ctx, key, l.Token); err != nil {
		t.Fatalf("Release: %v", err)
	}
	h.Release() // the first copy lands now

	if v := landed(ctx, direct, key); v != "" {
		t.Fatalf("the acquire (fence %d) was sent twice by the cluster client; its first copy landed after the release "+
			"and took the key: value %q, PTTL %v; nobody holds it", g.Fence, v, direct.PTTL(ctx, key).Val())
	}
}
