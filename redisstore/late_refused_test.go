package redisstore_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/storetest/faultproxy"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/redisstore"
)

// A TryObtain over a client that resends (go-redis's default MaxRetries)
// whose first copy is held on the wire, and whose resend finds the key
// taken, is refused: ErrNotObtained, and the Locker does nothing more. The
// first copy is still on its way; when it lands after the holder released,
// it takes the key, for a whole lease, for nobody. The same with
// WithReplicaAcks, whose pipeline go-redis resends on its own.
func TestRefusedTryObtainLandingLateTakesNothing(t *testing.T) {
	for _, tc := range []struct {
		name string
		wrap func(*redisstore.Store) *redisstore.Store
	}{
		{"plain", func(s *redisstore.Store) *redisstore.Store { return s }},
		{"replica acks", func(s *redisstore.Store) *redisstore.Store { return s.WithReplicaAcks(1, 50*time.Millisecond) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := redistest.Start(t)
			p := faultproxy.Start(t, srv.Addr)
			opts := redistest.ClientOptions(p.Addr())
			opts.MaxRetries = 3                       // go-redis's default
			opts.ReadTimeout = 300 * time.Millisecond // shorter than the default 3s, for speed
			via := redis.NewClient(opts)
			t.Cleanup(func() { _ = via.Close() })
			direct := srv.Client(t)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()

			const ttl = 10 * time.Second
			quiet := core.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
			refused := core.NewLocker(tc.wrap(redisstore.New(via)), core.WithTTL(ttl), quiet)
			holder := core.NewLocker(redisstore.New(direct), core.WithTTL(ttl), quiet)
			// Load the scripts through the proxy, so that the held call is the
			// one that counts.
			warm, err := refused.TryObtain(ctx, "warm-up")
			if err != nil && !errors.Is(err, core.ErrUnavailable) { // acks: no replica confirms
				t.Fatal(err)
			}
			if warm != nil {
				_ = warm.Release(ctx)
			}
			lk, err := holder.TryObtain(ctx, "k")
			if err != nil {
				t.Fatal(err)
			}

			h := p.HoldNext(faultproxy.Upstream)
			t.Cleanup(h.Release)
			if _, err := refused.TryObtain(ctx, "k"); !errors.Is(err, core.ErrNotObtained) {
				t.Fatalf("TryObtain: %v, want ErrNotObtained (the resend found the holder)", err)
			}
			select {
			case <-h.Captured():
			default:
				t.Fatal("no command was held")
			}
			if !bytes.Contains(h.Bytes(), []byte("SET")) && !bytes.Contains(h.Bytes(), []byte("evalsha")) {
				t.Fatalf("held %q, want the acquire", h.Bytes())
			}
			if err := lk.Release(ctx); err != nil {
				t.Fatal(err)
			}
			h.Release() // the first copy lands now

			skey, _ := holder.StoreKey("k")
			deadline := time.Now().Add(time.Second)
			for time.Now().Before(deadline) {
				if v, err := direct.Get(ctx, skey).Result(); err == nil {
					_, oerr := holder.TryObtain(ctx, "k")
					t.Fatalf("after the holder released, the refused attempt's first copy took the key for nobody: "+
						"value %q, PTTL %v; the next caller gets: %v", v, direct.PTTL(ctx, skey).Val(), oerr)
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
}
