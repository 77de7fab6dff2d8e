package core_test

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"
)

// commandHook is a go-redis hook that shows a test each command a client
// sends on its own (pipelines pass by): sent as it goes out, answered with
// its outcome. Either may be nil.
type commandHook struct {
	sent     func(redis.Cmder)
	answered func(redis.Cmder, error)
}

func (h commandHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h commandHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if h.sent != nil {
			h.sent(cmd)
		}
		err := next(ctx, cmd)
		if h.answered != nil {
			h.answered(cmd, err)
		}
		return err
	}
}

func (h commandHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// addCommandHook adds h where it sees the store's scripts: on a Cluster,
// to each node's client, since redisstore.Store sends its scripts straight to the
// key's master and hooks on the ClusterClient itself do not see them.
func addCommandHook(t *testing.T, ctx context.Context, c redis.UniversalClient, h redis.Hook) {
	t.Helper()
	cc, ok := c.(*redis.ClusterClient)
	if !ok {
		c.AddHook(h)
		return
	}
	if err := cc.ForEachShard(ctx, func(_ context.Context, node *redis.Client) error {
		node.AddHook(h)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
