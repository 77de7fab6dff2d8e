package redisstore_test

import (
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/core/storetest/faultproxy"
	"github.com/reqlock/reqlock/internal/leadtest"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/redisstore"
)

// A Lead that gives up while its attempt in line is on its way leaves the
// line over the connection it has (leadtest.GiveUpInLine).
func TestLeadGiveUpInLine(t *testing.T) {
	srv := redistest.Start(t)
	link := faultproxy.Start(t, srv.Addr)
	client := func(addr string) *redis.Client {
		c := redis.NewClient(redistest.ClientOptions(addr))
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	leadtest.GiveUpInLine(t, func() store.Store { return redisstore.New(client(srv.Addr)) }, redisstore.New(client(link.Addr())), link)
}
