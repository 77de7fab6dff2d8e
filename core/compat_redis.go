package core

import (
	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/redisstore"
	"github.com/reqlock/reqlock/redisstore/redlock"
)

// RedisStore keeps locks in Redis: a single node, a Cluster, or a Sentinel
// failover client. It is redisstore.Store.
type RedisStore = redisstore.Store

// NewRedisStore returns a store over c (redisstore.New).
func NewRedisStore(c redis.UniversalClient) *RedisStore { return redisstore.New(c) }

// ErrNotReplicated means too few replicas acknowledged a lock in time
// (RedisStore.WithReplicaAcks).
var ErrNotReplicated = redisstore.ErrNotReplicated

// RedlockStore keeps locks on several independent Redis masters, a lock
// held when a majority grants it. It is redlock.Store.
type RedlockStore = redlock.Store

// NewRedlockStore returns a store over the masters' clients (redlock.New).
func NewRedlockStore(clients ...redis.UniversalClient) *RedlockStore {
	return redlock.New(clients...)
}

// DefaultNodeTimeout bounds each node's answer in a RedlockStore
// (redlock.DefaultNodeTimeout).
const DefaultNodeTimeout = redlock.DefaultNodeTimeout
