// Package storeenv picks the store the examples run on: Redis when REDIS_URL
// is set (redis://host:port/db), else the in-process memory store, so every
// example runs on a machine with nothing but Go.
package storeenv

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/memorystore"
	"github.com/reqlock/reqlock/redisstore"
)

// Open returns the store, a line that says which one it is, and a func that
// closes it.
func Open() (core.Store, string, func(), error) {
	url := os.Getenv("REDIS_URL")
	if url == "" {
		return memorystore.New(), "memory store (set REDIS_URL to use Redis)", func() {}, nil
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, "", nil, fmt.Errorf("REDIS_URL: %w", err)
	}
	// Without this, go-redis ignores context deadlines on the socket and a
	// hung Redis holds every caller for the full read timeout.
	opt.ContextTimeoutEnabled = true
	// A Redis that refuses connections should fail a request at once, not
	// after go-redis's default five dial attempts.
	opt.DialerRetries = 1
	c := redis.NewClient(opt)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		_ = c.Close()
		return nil, "", nil, fmt.Errorf("redis at %s: %w", opt.Addr, err)
	}
	return redisstore.New(c), "Redis at " + opt.Addr, func() { _ = c.Close() }, nil
}
