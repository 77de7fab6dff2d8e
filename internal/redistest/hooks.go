package redistest

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"
)

// CommandHook is a go-redis hook that shows a test each command a client
// sends on its own (pipelines pass by): Sent as it goes out, Answered with
// its outcome. Either may be nil.
type CommandHook struct {
	Sent     func(redis.Cmder)
	Answered func(redis.Cmder, error)
}

func (h CommandHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h CommandHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if h.Sent != nil {
			h.Sent(cmd)
		}
		err := next(ctx, cmd)
		if h.Answered != nil {
			h.Answered(cmd, err)
		}
		return err
	}
}

func (h CommandHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// AddCommandHook adds h where it sees the store's scripts: on a Cluster,
// to each node's client, since the Redis store sends its scripts straight
// to the key's master and hooks on the ClusterClient itself do not see
// them.
func AddCommandHook(t testing.TB, ctx context.Context, c redis.UniversalClient, h redis.Hook) {
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
