package node

import (
	"context"
	_ "embed"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core/store"
)

var (
	//go:embed lua/mark_run.lua
	markRunLua    string
	markRunScript = redis.NewScript(markRunLua)
	markRunCall   = newScriptCall(markRunScript, markRunLua, 2)

	//go:embed lua/unmark_run.lua
	unmarkRunLua    string
	unmarkRunScript = redis.NewScript(unmarkRunLua)
	unmarkRunCall   = newScriptCall(unmarkRunScript, unmarkRunLua, 2)
)

// runSuffix names a key's run mark (store.RunMarker), in the lock's slot.
// A record written after the mark, kept as long, outlives it: the mark
// needs no deleting when the run records.
const runSuffix = ":run"

// MarkRun implements store.RunMarker: mark_run.lua, one round trip.
func (s *Node) MarkRun(ctx context.Context, key, token string, retention time.Duration, again bool) (bool, error) {
	flag := "0"
	if again {
		flag = "1"
	}
	args := append(evalArgs(5), key, key+runSuffix, token, ceilMillis(retention), flag)
	n, err := run(ctx, s.d, markRunCall, args).Int64()
	switch {
	case err != nil:
		return false, err
	case n < 0:
		return false, store.ErrNotHeld
	}
	return n == 1, nil
}

// UnmarkRun implements store.RunMarker: unmark_run.lua, one round trip.
func (s *Node) UnmarkRun(ctx context.Context, key, token string) error {
	args := append(evalArgs(3), key, key+runSuffix, token)
	n, err := run(ctx, s.d, unmarkRunCall, args).Int64()
	switch {
	case err != nil:
		return err
	case n == 0:
		return store.ErrNotHeld
	}
	return nil
}

// ForgetRun implements store.RunMarker.
func (s *Node) ForgetRun(ctx context.Context, key string) error {
	return s.c.Del(ctx, key+runSuffix).Err()
}
