package main

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/redisstore"
	"github.com/reqlock/reqlock/redisstore/redlock"
)

// openedStore is the store the command asks, and what to close after.
type openedStore struct {
	store   core.Store
	where   string // the addresses, for messages
	clients []redis.UniversalClient
}

func (s openedStore) close() {
	for _, c := range s.clients {
		_ = c.Close()
	}
}

// openStore connects to what urls names: one Redis, a Cluster, or the
// nodes of a Redlock store (several URLs, comma-separated). It only builds
// clients; nothing is dialled until the first command.
func openStore(urls string, cluster bool, timeout time.Duration) (openedStore, error) {
	urls = strings.TrimSpace(urls)
	if urls == "" {
		return openedStore{}, errors.New("REDIS_URL is not set (redis://host:6379/0; comma-separated URLs for Redlock nodes)")
	}
	if cluster {
		o, err := redis.ParseClusterURL(urls)
		if err != nil {
			return openedStore{}, fmt.Errorf("REDIS_URL: %w", withoutURL(err))
		}
		o.ContextTimeoutEnabled = true
		c := redis.NewClusterClient(o)
		return openedStore{store: redisstore.New(c), where: strings.Join(o.Addrs, ","),
			clients: []redis.UniversalClient{c}}, nil
	}
	var clients []redis.UniversalClient
	var addrs []string
	for u := range strings.SplitSeq(urls, ",") {
		o, err := redis.ParseURL(strings.TrimSpace(u))
		if err != nil {
			closeAll(clients)
			return openedStore{}, fmt.Errorf("REDIS_URL: %w", withoutURL(err))
		}
		if slices.Contains(addrs, o.Addr) {
			closeAll(clients)
			return openedStore{}, fmt.Errorf("REDIS_URL names %s twice", o.Addr)
		}
		// Deadlines reach the socket, so -timeout bounds a hung server; a
		// refused dial is an answer, not worth five tries.
		o.ContextTimeoutEnabled = true
		o.DialerRetries = 1
		clients = append(clients, redis.NewClient(o))
		addrs = append(addrs, o.Addr)
	}
	st := openedStore{where: strings.Join(addrs, ","), clients: clients}
	if len(clients) == 1 {
		st.store = redisstore.New(clients[0])
	} else {
		st.store = redlock.New(clients...).WithNodeTimeout(timeout)
	}
	return st, nil
}

func closeAll(clients []redis.UniversalClient) {
	for _, c := range clients {
		_ = c.Close()
	}
}

// withoutURL is a URL parse error without the URL itself, which may hold a
// password: net/url quotes it whole.
func withoutURL(err error) error {
	if ue, ok := errors.AsType[*url.Error](err); ok {
		return fmt.Errorf("not a valid URL: %w", ue.Err)
	}
	return err
}
