package node

import (
	"context"
	_ "embed"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/reqlock/reqlock/core/store"
)

var (
	//go:embed lua/inspect.lua
	inspectLua    string
	inspectScript = redis.NewScript(inspectLua)
	inspectCall   = newScriptCall(inspectScript, inspectLua, 3)
)

// Inspect implements store.Inspector: inspect.lua, one round trip. The lock, its
// fence counter and its line share the key's {hash tag}, so on a Cluster it
// is one script on the key's master too.
func (s *Node) Inspect(ctx context.Context, key string) (store.Holding, error) {
	h, _, err := s.inspect(ctx, key)
	return h, err
}

// inspect is Inspect, plus a digest of the lock's value ("" when free) that
// tells holders apart without revealing their tokens.
func (s *Node) inspect(ctx context.Context, key string) (store.Holding, string, error) {
	args := append(evalArgs(3), key, key+fenceSuffix, key+queueSuffix)
	v, err := run(ctx, s.d, inspectCall, args).Slice()
	if err != nil {
		return store.Holding{}, "", err
	}
	return inspectReply(v)
}

// inspectReply reads inspect.lua's answer.
func inspectReply(v []any) (store.Holding, string, error) {
	bad := func() (store.Holding, string, error) {
		return store.Holding{}, "", fmt.Errorf("reqlock: inspect: unexpected reply %v", v)
	}
	if len(v) != 6 {
		return bad()
	}
	state, ok1 := v[0].(int64)
	pttl, ok2 := v[1].(int64)
	fence, ok3 := v[2].(string)
	waiting, ok4 := v[3].(int64)
	holder, ok5 := v[4].(string)
	id, ok6 := v[5].(string)
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || !ok6 {
		return bad()
	}
	h := store.Holding{Held: state != 0, HandedOff: state == 2, Holder: holder, Waiting: int(waiting)}
	if pttl > 0 {
		h.Lease = time.Duration(pttl) * time.Millisecond
	}
	if fence != "" {
		f, err := strconv.ParseUint(fence, 10, 64)
		if err != nil {
			return store.Holding{}, "", fmt.Errorf("reqlock: inspect: fence counter %q is not a fence", fence)
		}
		h.Fence = f
	}
	return h, id, nil
}
