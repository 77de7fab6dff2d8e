package core

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// The floors every Redis benchmark is read against, one definition shared
// by the benchmarks of package core and of core_test.

const floorToken = "token-0123456789abcdef"

var (
	// floorReleaseScript is the least a correct release can do: compare,
	// then delete.
	floorReleaseScript = redis.NewScript(`if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`)

	// scriptedSetNXScript is the floor's SET NX PX inside a script. The
	// acquire must be one script to hand out a fence atomically, and on
	// Redis 7.0 the script envelope alone costs microseconds of server
	// time; read against this floor, a figure shows what reqlock adds
	// beyond that envelope.
	scriptedSetNXScript = redis.NewScript(`return redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2])`)

	// scriptedGetScript is the least a one-script replay hit can do: fetch
	// the record, and nothing else, from a script sent the hit's keys and
	// arguments.
	scriptedGetScript = redis.NewScript(scriptedGetSource)
)

const scriptedGetSource = `return redis.call('GET', KEYS[4])`

// FloorSetNX is the floor's acquire: a bare SET key token NX PX.
func FloorSetNX(ctx context.Context, c redis.UniversalClient, key string) error {
	return c.SetNX(ctx, key, floorToken, 10*time.Second).Err()
}

// FloorScriptedSetNX is the scripted floor's acquire.
func FloorScriptedSetNX(ctx context.Context, c redis.UniversalClient, key string) error {
	return scriptedSetNXScript.Run(ctx, c, []string{key}, floorToken, 10000).Err()
}

// FloorRelease is the floors' release, after either acquire.
func FloorRelease(ctx context.Context, c redis.UniversalClient, key string) error {
	return floorReleaseScript.Run(ctx, c, []string{key}, floorToken).Err()
}

// FloorScriptedGet is the scripted floor of a replay hit: scriptedGetScript,
// sent as the store sends its acquire (run), with the keys and arguments
// of the acquire of storeKey that asks for its record (recordArgs).
func FloorScriptedGet(ctx context.Context, c redis.UniversalClient, storeKey string) ([]byte, error) {
	l := Lease{Key: storeKey, Token: newToken(), TTL: DefaultTTL}
	call := newScriptCall(scriptedGetScript, scriptedGetSource, 4)
	v, err := run(ctx, c, call, recordArgs(l, l.TTL.Milliseconds(), fenceTTL(l.TTL).Milliseconds())).Text()
	return []byte(v), err
}
