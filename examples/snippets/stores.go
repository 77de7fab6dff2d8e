package snippets

import (
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/memorystore"
	"github.com/reqlock/reqlock/redisstore"
	"github.com/reqlock/reqlock/redisstore/redlock"
)

// RedisClient is docs/configuration.md's Redis client: the settings reqlock
// relies on.
func RedisClient() *redis.Client {
	return redis.NewClient(&redis.Options{
		Addr:                  "localhost:6379",
		ContextTimeoutEnabled: true, // required: lets deadlines reach the socket
		DialerRetries:         1,    // a Redis that refuses connections fails a request at once
	})
}

// Stores is docs/stores.md's constructors, one Locker per store.
func Stores(c1, c2, c3 redis.UniversalClient, sentinels, cluster []string) []*core.Locker {
	memory := core.NewLocker(memorystore.New()) // one process

	single := core.NewLocker(redisstore.New(redis.NewClient(&redis.Options{
		Addr: "localhost:6379", ContextTimeoutEnabled: true,
	})))

	// Sentinel: an acquire counts once a replica confirmed it (WAIT, same round trip).
	failover := redis.NewFailoverClient(&redis.FailoverOptions{
		MasterName: "mymaster", SentinelAddrs: sentinels, ContextTimeoutEnabled: true,
	})
	sentinel := core.NewLocker(redisstore.New(failover).WithReplicaAcks(1, 50*time.Millisecond))

	clustered := core.NewLocker(redisstore.New(redis.NewClusterClient(&redis.ClusterOptions{
		Addrs: cluster, ContextTimeoutEnabled: true,
	})))

	// Redlock: independent masters (not replicas of each other), an odd number.
	majority := core.NewLocker(redlock.New(c1, c2, c3).WithNodeTimeout(100 * time.Millisecond))

	return []*core.Locker{memory, single, sentinel, clustered, majority}
}

// LockerOptions is docs/core.md's options, each at its default but for the
// holder label.
func LockerOptions(store core.Store, hostname string) *core.Locker {
	return core.NewLocker(store,
		core.WithTTL(10*time.Second),      // the lease: how long a crashed holder blocks the key
		core.WithRetry(core.DefaultRetry), // how Obtain waits between attempts
		core.WithPrefix("reqlock:"),       // the store's key namespace
		core.WithHolder(hostname),         // who holds a key, for Inspect and `reqlock inspect`
	)
}
