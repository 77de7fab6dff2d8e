package node

import (
	"log/slog"

	"github.com/redis/go-redis/v9"
	"github.com/reqlock/reqlock/redisstore/internal/perclient"
)

// ignoresDeadlines reports whether c was built without
// ContextTimeoutEnabled: go-redis then leaves context deadlines off the
// socket, and a Redis that hangs holds each call for the client's
// ReadTimeout (or for ever, with ReadTimeout -1) instead of the caller's
// deadline. Every bound reqlock promises on a wait, an attempt or a
// release rests on those deadlines. ok is false for a client of a type it
// cannot inspect.
func ignoresDeadlines(c redis.UniversalClient) (ignores, ok bool) {
	switch c := c.(type) {
	case *redis.Client:
		return !c.Options().ContextTimeoutEnabled, true
	case *redis.ClusterClient:
		return !c.Options().ContextTimeoutEnabled, true
	case *redis.Ring:
		return !c.Options().ContextTimeoutEnabled, true
	}
	return false, false
}

// mayResend reports whether c may send a command again after its reply
// was lost (go-redis retries: MaxRetries is 3 unless set to -1, which the
// client's options then hold as 0). A resent
// acquire can then succeed while its first copy is still on its way, and
// that copy can land after the lock's release.
func mayResend(c redis.UniversalClient) bool {
	switch c := c.(type) {
	case *redis.Client:
		return c.Options().MaxRetries > 0
	case *redis.ClusterClient:
		return c.Options().MaxRetries > 0
	case *redis.Ring:
		return c.Options().MaxRetries > 0
	}
	return true
}

// warnedClients holds the clients already warned about, so that a client
// shared by several stores (a Redlock store, a store per Locker) is named
// once. It lets go of a client once the client is collected.
var warnedClients perclient.Map[struct{}]

// warnIfIgnoresDeadlines logs, once per client, that c ignores context
// deadlines. New cannot return an error, and refusing such a
// client outright would turn a working setup into a panic at start-up; a
// warning at construction is seen by the operator who can fix it.
func warnIfIgnoresDeadlines(c redis.UniversalClient) {
	ignores, ok := ignoresDeadlines(c)
	if !ok || !ignores {
		return
	}
	if _, seen := warnedClients.LoadOrStore(c, struct{}{}); seen {
		return
	}
	slog.Default().Warn("reqlock: the Redis client was created without ContextTimeoutEnabled: "+
		"context deadlines do not reach the socket, so a hung Redis holds each lock call for the client's ReadTimeout "+
		"instead of the caller's deadline; set ContextTimeoutEnabled: true in its options",
		"reqlock.reason", "context_timeout_disabled")
}
