package fiberlock_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gofiber/fiber/v3"
	"github.com/gofiber/fiber/v3/middleware/idempotency"
	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/fiberlock"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/internal/httpcases"
	"github.com/reqlock/reqlock/redisstore"
)

// Two instances of a Fiber app, each with its own Locker over one Redis and
// Fiber's idempotency middleware on IdempotencyLocker: 20 duplicates sent
// to both at once run the handler once, and every one gets its answer.
func TestIdempotencyLockerTwoInstances(t *testing.T) {
	be := httpcases.OpenRedis(t)
	addr := be.Client.(*redis.Client).Options().Addr
	var runs atomic.Int32
	var urls []string
	for range 2 {
		c := redis.NewClient(&redis.Options{Addr: addr})
		t.Cleanup(func() { _ = c.Close() })
		l := core.NewLocker(redisstore.New(c), core.WithLogger(httpcases.Quiet))
		app := fiber.New()
		app.Use(idempotency.New(idempotency.Config{
			Lock:     fiberlock.IdempotencyLocker(l),
			Storage:  redisStorage{c},
			Lifetime: time.Minute,
		}))
		app.Post("/orders", func(c fiber.Ctx) error {
			n := runs.Add(1)
			time.Sleep(100 * time.Millisecond) // long enough for every duplicate to arrive meanwhile
			return c.Status(http.StatusCreated).SendString(fmt.Sprintf("order %d", n))
		})
		urls = append(urls, serve(t, app))
	}

	const key = "8e03978e-40d5-43e8-bc93-6894a57f9324"
	type result struct {
		status int
		body   string
		err    error
	}
	results := make(chan result, 20)
	var start sync.WaitGroup
	start.Add(1)
	for i := range 20 {
		go func() {
			start.Wait()
			req, _ := http.NewRequest("POST", urls[i%2]+"/orders", nil)
			req.Header.Set("X-Idempotency-Key", key)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				results <- result{err: err}
				return
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			results <- result{resp.StatusCode, string(b), err}
		}()
	}
	start.Done()
	for range 20 {
		select {
		case r := <-results:
			if r.err != nil || r.status != http.StatusCreated || r.body != "order 1" {
				t.Errorf("got %d %q %v, want 201 \"order 1\"", r.status, r.body, r.err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("not every duplicate answered within 30s")
		}
	}
	if n := runs.Load(); n != 1 {
		t.Fatalf("the handler ran %d times for one key on two instances, want once", n)
	}
	http.DefaultClient.CloseIdleConnections()
}

// The key in the store is a hash: the client's text never reaches it.
func TestIdempotencyLockerKeys(t *testing.T) {
	be := httpcases.OpenRedis(t)
	lk := fiberlock.IdempotencyLocker(core.NewLocker(redisstore.New(be.Client), core.WithLogger(httpcases.Quiet)))
	const key = "raw-client-text"
	if err := lk.Lock(key); err != nil {
		t.Fatal(err)
	}
	keys, err := be.Client.Keys(context.Background(), "*").Result()
	if err != nil || len(keys) == 0 {
		t.Fatalf("keys %v, %v", keys, err)
	}
	for _, k := range keys {
		if strings.Contains(k, key) {
			t.Errorf("store key %q holds the raw key", k)
		}
	}
	if err := lk.Unlock(key); err != nil {
		t.Fatal(err)
	}
	if err := lk.Unlock(key); !errors.Is(err, core.ErrNotHeld) {
		t.Fatalf("second Unlock: %v, want core.ErrNotHeld", err)
	}
}

// The store down: Lock fails, and Fiber's middleware answers with an error.
func TestIdempotencyLockerStoreDown(t *testing.T) {
	be := httpcases.OpenRedis(t)
	lk := fiberlock.IdempotencyLocker(core.NewLocker(redisstore.New(be.Client), core.WithLogger(httpcases.Quiet), core.WithTTL(time.Second)))
	be.Down()
	if err := lk.Lock("k"); !errors.Is(err, core.ErrUnavailable) {
		t.Fatalf("Lock with the store down: %v, want core.ErrUnavailable", err)
	}
}

func TestIdempotencyLockerNil(t *testing.T) {
	defer func() {
		if err, _ := recover().(error); !errors.Is(err, httplock.ErrInvalidConfig) {
			t.Fatalf("recovered %v, want ErrInvalidConfig", err)
		}
	}()
	fiberlock.IdempotencyLocker(nil)
}

// redisStorage is a fiber.Storage on Redis, which the instances share.
type redisStorage struct{ c *redis.Client }

func (s redisStorage) GetWithContext(ctx context.Context, key string) ([]byte, error) {
	b, err := s.c.Get(ctx, key).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	return b, err
}

func (s redisStorage) Get(key string) ([]byte, error) {
	return s.GetWithContext(context.Background(), key)
}

func (s redisStorage) SetWithContext(ctx context.Context, key string, val []byte, exp time.Duration) error {
	if key == "" || len(val) == 0 {
		return nil
	}
	return s.c.Set(ctx, key, val, exp).Err()
}

func (s redisStorage) Set(key string, val []byte, exp time.Duration) error {
	return s.SetWithContext(context.Background(), key, val, exp)
}

func (s redisStorage) DeleteWithContext(ctx context.Context, key string) error {
	return s.c.Del(ctx, key).Err()
}

func (s redisStorage) Delete(key string) error { return s.DeleteWithContext(context.Background(), key) }

func (s redisStorage) ResetWithContext(ctx context.Context) error { return s.c.FlushDB(ctx).Err() }

func (s redisStorage) Reset() error { return s.ResetWithContext(context.Background()) }

func (s redisStorage) Close() error { return nil }
