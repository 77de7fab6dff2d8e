package main

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/redisstore"
	"github.com/reqlock/reqlock/redisstore/redlock"
)

// openRedis connects to what urls names: one Redis, a Cluster (cluster),
// Sentinels (?master_name=), or the nodes of a Redlock store (several URLs,
// comma-separated).
func openRedis(urls string, cluster bool, timeout time.Duration) (openedStore, error) {
	urls = strings.TrimSpace(urls)
	switch {
	case cluster:
		o, err := redis.ParseClusterURL(urls)
		if err != nil {
			return openedStore{}, fmt.Errorf("REDIS_URL: %w", withoutURL(err))
		}
		o.ContextTimeoutEnabled = true
		c := redis.NewClusterClient(o)
		return openedStore{store: redisstore.New(c), where: "Redis Cluster at " + strings.Join(o.Addrs, ","),
			close: func() { _ = c.Close() }}, nil
	case !strings.Contains(urls, ",") && strings.Contains(urls, "master_name="):
		o, err := redis.ParseFailoverURL(urls)
		if err != nil {
			return openedStore{}, fmt.Errorf("REDIS_URL: %w", withoutURL(err))
		}
		o.ContextTimeoutEnabled = true
		c := redis.NewFailoverClient(o)
		return openedStore{store: redisstore.New(c),
			where: fmt.Sprintf("Redis master %q of the Sentinels at %s", o.MasterName, strings.Join(o.SentinelAddrs, ",")),
			close: func() { _ = c.Close() }}, nil
	}
	var clients []redis.UniversalClient
	var addrs []string
	closeAll := func() {
		for _, c := range clients {
			_ = c.Close()
		}
	}
	for u := range strings.SplitSeq(urls, ",") {
		o, err := redis.ParseURL(strings.TrimSpace(u))
		if err != nil {
			closeAll()
			return openedStore{}, fmt.Errorf("REDIS_URL: %w", withoutURL(err))
		}
		if slices.Contains(addrs, o.Addr) {
			closeAll()
			return openedStore{}, fmt.Errorf("REDIS_URL names %s twice", o.Addr)
		}
		// Deadlines reach the socket, so -timeout bounds a hung server; a
		// refused dial is an answer, not worth five tries.
		o.ContextTimeoutEnabled = true
		o.DialerRetries = 1
		clients = append(clients, redis.NewClient(o))
		addrs = append(addrs, o.Addr)
	}
	if len(clients) == 1 {
		return openedStore{store: redisstore.New(clients[0]), where: "Redis at " + addrs[0], close: closeAll}, nil
	}
	return openedStore{store: redlock.New(clients...).WithNodeTimeout(timeout),
		where: "Redlock nodes at " + strings.Join(addrs, ","), close: closeAll}, nil
}

// withoutURL is a URL parse error without the URL itself, which may hold a
// password: net/url quotes it whole.
func withoutURL(err error) error {
	if ue, ok := errors.AsType[*url.Error](err); ok {
		return fmt.Errorf("not a valid URL: %w", ue.Err)
	}
	return err
}
