package node

import (
	"context"
	"fmt"
)

// RecordsDurable implements store.Durability: records survive a restart of Redis
// only with AOF (appendonly yes) or RDB snapshots (save …), and with RDB
// the writes since the last snapshot are lost. It asks with CONFIG GET,
// which a managed Redis may rename or refuse: then it returns the error,
// and nothing can be said. On a Cluster it asks the node the client picks;
// the nodes of one deployment share a configuration.
func (s *Node) RecordsDurable(ctx context.Context) (durable bool, detail string, err error) {
	aof, err := s.c.ConfigGet(ctx, "appendonly").Result()
	if err != nil {
		return false, "", fmt.Errorf("reqlock: CONFIG GET appendonly: %w", err)
	}
	if aof["appendonly"] == "yes" {
		return true, "appendonly yes", nil
	}
	save, err := s.c.ConfigGet(ctx, "save").Result()
	if err != nil {
		return false, "", fmt.Errorf("reqlock: CONFIG GET save: %w", err)
	}
	if rdb := save["save"]; rdb != "" {
		return true, fmt.Sprintf("RDB snapshots only (save %q): records written since the last snapshot are lost on a restart", rdb), nil
	}
	return false, "appendonly no and no RDB snapshots (save \"\"): every record is lost when Redis restarts", nil
}
