package node

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core/store"
)

// The scripted floor of a replay hit, for the benchmarks: a script that
// only fetches the record, sent as the store sends its acquire (run), with
// the keys and arguments of the acquire that asks for its record.
var (
	scriptedGetSource = `return redis.call('GET', KEYS[4])`
	scriptedGetScript = redis.NewScript(scriptedGetSource)
)

// ScriptedRecordGet fetches the record of storeKey with a script that does
// nothing else, sent as the store sends its acquire: the scripted floor
// the replay benchmarks read a hit against.
// A fresh token each time, as the Locker makes one for each acquire.
func ScriptedRecordGet(ctx context.Context, c redis.UniversalClient, storeKey string) ([]byte, error) {
	var b [16]byte
	_, _ = rand.Read(b[:])
	l := store.Lease{Key: storeKey, Token: base64.RawURLEncoding.EncodeToString(b[:]), TTL: 10 * time.Second}
	call := newScriptCall(scriptedGetScript, scriptedGetSource, 4)
	v, err := run(ctx, c, call, recordArgs(l, l.TTL.Milliseconds(), fenceTTL(l.TTL).Milliseconds(), 0)).Text()
	return []byte(v), err
}
