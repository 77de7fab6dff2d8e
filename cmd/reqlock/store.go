package main

import (
	"errors"
	"strings"
	"time"

	"github.com/reqlock/reqlock/core"
)

// The environment variables that name the store, in the order the command
// looks at them: the first one set is the store, as in examples/demo.
const (
	envPostgres = "DATABASE_URL"
	envEtcd     = "ETCD_ENDPOINTS"
	envRedis    = "REDIS_URL"
)

// storeHelp is what the usage says of the environment.
const storeHelp = `The store is the first of these that is set:

  DATABASE_URL    PostgreSQL (pgstore): postgres://user:password@host:5432/db
  ETCD_ENDPOINTS  etcd (etcdstore): comma-separated, http://127.0.0.1:2379,...
  REDIS_URL       Redis (redisstore): redis://[user:password@]host:6379/0, or
                  rediss:// for TLS; comma-separated URLs are the nodes of a
                  Redlock store (redlock); with -cluster, a Redis Cluster (more
                  nodes as ?addr=host:port); with ?master_name=NAME, Sentinels
                  (more as ?addr=) that name the master.
`

// errNoStore is a usage error: no variable names a store.
var errNoStore = errors.New(envPostgres + ", " + envEtcd + " and " + envRedis + " are not set: one of them names the store (reqlock inspect -h)")

// openedStore is the store the command asks, and what to close after.
type openedStore struct {
	store core.Store
	where string // which server, at which addresses, for messages
	close func()
}

// openStore connects to the store the environment names. It only builds
// clients; a server is first reached by the Inspect that follows, within
// timeout.
func openStore(getenv func(string) string, cluster bool, timeout time.Duration) (openedStore, error) {
	if cluster && strings.TrimSpace(getenv(envRedis)) == "" {
		return openedStore{}, errors.New("-cluster is for REDIS_URL, which is not set")
	}
	switch {
	case strings.TrimSpace(getenv(envPostgres)) != "":
		return openPostgres(getenv(envPostgres), timeout)
	case strings.TrimSpace(getenv(envEtcd)) != "":
		return openEtcd(getenv(envEtcd), timeout)
	case strings.TrimSpace(getenv(envRedis)) != "":
		return openRedis(getenv(envRedis), cluster, timeout)
	}
	return openedStore{}, errNoStore
}
