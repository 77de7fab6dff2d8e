package node

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/core/storetest/faultproxy"
	"github.com/reqlock/reqlock/internal/redistest"
)

// An acquire whose first copy is held on the wire and whose resend is
// refused (someone holds the key) answers not obtained, on which the Locker
// does nothing more. The first copy is still on its way: the store leaves
// its token's cancel marker before it answers, so that when the copy lands
// after the holder's release it takes nothing.
func TestRefusedResentAcquireLandingLateTakesNothing(t *testing.T) {
	s, p, direct, ctx := resendingNode(t)
	other := New(direct)
	const key = "reqlock:{refused-resent}"
	holder := store.Lease{Key: key, Token: "holder", TTL: 10 * time.Second}
	if _, err := other.Acquire(ctx, holder); err != nil {
		t.Fatal(err)
	}

	h := p.HoldNext(faultproxy.Upstream)
	t.Cleanup(h.Release)
	late := store.Lease{Key: key, Token: "refused", TTL: 10 * time.Second}
	_, err := s.Acquire(ctx, late)
	heldEvalsha(t, h)
	if !isNotObtained(err) {
		t.Fatalf("Acquire: %v, want not obtained (the resend found the holder)", err)
	}
	if err := other.Release(ctx, key, holder.Token); err != nil {
		t.Fatal(err)
	}
	h.Release() // the first copy lands now

	if v := landed(ctx, direct, key); v != "" {
		t.Fatalf("a refused acquire's first copy landed after the holder's release and took the key: "+
			"value %q, PTTL %v; nobody holds it", v, direct.PTTL(ctx, key).Val())
	}
}

// opaqueClient is a client of a type the store cannot inspect, as a
// wrapper of the caller's own would be.
type opaqueClient struct{ *redis.Client }

// Over a client whose resending the store cannot see, any attempt may have
// a copy on its way: each one that took nothing leaves its marker, as each
// release does.
func TestRefusedAcquireOverOpaqueClientVoided(t *testing.T) {
	srv := redistest.Start(t)
	direct := srv.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s := New(opaqueClient{direct})
	const key = "reqlock:{opaque}"
	if _, err := New(direct).Acquire(ctx, store.Lease{Key: key, Token: "holder", TTL: 10 * time.Second}); err != nil {
		t.Fatal(err)
	}
	refused := store.Lease{Key: key, Token: "refused", TTL: 10 * time.Second}
	if _, err := s.Acquire(ctx, refused); !isNotObtained(err) {
		t.Fatalf("Acquire: %v, want not obtained", err)
	}
	if n, err := direct.Exists(ctx, cancelKey(key, refused.Token)).Result(); err != nil || n != 1 {
		t.Fatalf("the refused attempt's marker: %d, %v; want it there", n, err)
	}
}
