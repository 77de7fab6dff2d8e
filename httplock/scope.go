package httplock

import (
	"strconv"
	"strings"
)

// DefaultScope is the scope of a route: method + " " + route template, e.g.
// "POST /orders/{id}". A net/http pattern that names a method ("POST
// /orders/{id}") has it replaced by the request's method. An empty route
// gives the method alone; the middleware never locks on that (see
// ErrRouteUnknown).
func DefaultScope(method, route string) string {
	if i := strings.IndexByte(route, ' '); i >= 0 {
		route = strings.TrimLeft(route[i+1:], " \t")
	}
	if route == "" {
		return method
	}
	return method + " " + route
}

// LockKey is the key the middleware asks its Locker for: scope and raw key,
// length-prefixed so that no two (scope, key) pairs give the same string.
// The Locker hashes it whole, so neither the scope (whose route templates
// hold braces that would break a Redis hash tag) nor client text ever appears
// in Redis. Use it to take the same lock outside HTTP, for example from a
// background job: locker.Obtain(ctx, httplock.LockKey("orders", id)).
func LockKey(scope, key string) string {
	var b strings.Builder
	b.Grow(len(scope) + len(key) + 6)
	b.WriteString(strconv.Itoa(len(scope)))
	b.WriteByte(':')
	b.WriteString(scope)
	b.WriteByte(':')
	b.WriteString(key)
	return b.String()
}
