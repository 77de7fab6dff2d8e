// Package redisfloor holds the floors every Redis benchmark is read
// against: what a hand-written lock sends, nothing more. One definition,
// shared by the benchmarks of core and of the Redis stores.
package redisfloor

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// Token is the floor's lock value.
const Token = "token-0123456789abcdef"

var (
	// releaseScript is the least a correct release can do: compare, then
	// delete.
	releaseScript = redis.NewScript(`if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`)

	// scriptedSetNXScript is the floor's SET NX PX inside a script. The
	// acquire must be one script to hand out a fence atomically, and on
	// Redis 7.0 the script envelope alone costs microseconds of server
	// time; read against this floor, a figure shows what reqlock adds
	// beyond that envelope.
	scriptedSetNXScript = redis.NewScript(`return redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2])`)
)

// SetNX is the floor's acquire: a bare SET key token NX PX.
func SetNX(ctx context.Context, c redis.UniversalClient, key string) error {
	return c.SetNX(ctx, key, Token, 10*time.Second).Err()
}

// ScriptedSetNX is the scripted floor's acquire.
func ScriptedSetNX(ctx context.Context, c redis.UniversalClient, key string) error {
	return scriptedSetNXScript.Run(ctx, c, []string{key}, Token, 10000).Err()
}

// Release is the floors' release, after either acquire.
func Release(ctx context.Context, c redis.UniversalClient, key string) error {
	return releaseScript.Run(ctx, c, []string{key}, Token).Err()
}
