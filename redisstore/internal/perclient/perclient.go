// Package perclient keeps one value per go-redis client without keeping
// the client alive: a service that makes a client per tenant, or a new one
// on every reconnect, must not leak them through a store that once saw
// them. An entry goes when its client is collected.
package perclient

import (
	"runtime"
	"sync"
	"weak"

	"github.com/redis/go-redis/v9"
)

// Map maps clients to values of type V, weakly. The zero Map is ready.
type Map[V any] struct{ m sync.Map }

// LoadOrStore returns the value kept for c, or keeps v and returns it;
// loaded says it was there. A client of a type it cannot hold weakly (not
// a *redis.Client, *redis.ClusterClient or *redis.Ring) keeps nothing:
// LoadOrStore then returns v, not loaded, every time.
func (m *Map[V]) LoadOrStore(c redis.UniversalClient, v V) (actual V, loaded bool) {
	switch c := c.(type) {
	case *redis.Client:
		return loadOrStore(m, c, v)
	case *redis.ClusterClient:
		return loadOrStore(m, c, v)
	case *redis.Ring:
		return loadOrStore(m, c, v)
	}
	return v, false
}

func loadOrStore[T any, V any](m *Map[V], c *T, v V) (V, bool) {
	key := weak.Make(c)
	if a, ok := m.m.Load(key); ok {
		return a.(V), true
	}
	a, loaded := m.m.LoadOrStore(key, v)
	if !loaded {
		runtime.AddCleanup(c, func(k weak.Pointer[T]) { m.m.Delete(k) }, key)
	}
	return a.(V), loaded
}
