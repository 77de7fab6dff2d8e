package node

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"
)

// masterDoer sends a script call straight to the Cluster master that owns
// its first key, as the cluster client would, minus the cluster client's
// per-command routing work, which costs about as much as our whole script.
// A slot that has moved answers MOVED or ASK without running the script,
// and a node that cannot serve it yet TRYAGAIN, CLUSTERDOWN, LOADING,
// MASTERDOWN or (a demoted master) READONLY; then the call goes again
// through the cluster client, which follows the redirect, waits, or
// refreshes its slot map.
//
// Hooks added to the ClusterClient itself do not see these calls; hooks
// added to its node clients (ClusterOptions.OnNewNode, as tracing libraries
// do) do.
type masterDoer struct{ cc *redis.ClusterClient }

// Do takes args as run builds them: verb, script, numkeys, then the keys.
func (m masterDoer) Do(ctx context.Context, args ...any) *redis.Cmd {
	if key, ok := args[3].(string); ok {
		if node, err := m.cc.MasterForKey(ctx, key); err == nil {
			cmd := node.Do(ctx, args...)
			err := cmd.Err()
			var answer redis.Error
			if err != nil && !errors.As(err, &answer) {
				// The master did not answer (failed over, unreachable). The
				// call may have run, so it is not sent again from here (the
				// node client resends it only if ClusterOptions.MaxRetries
				// asks it to, which a retried acquire tolerates: it finds its
				// own token); but the slot map is refreshed, since calls that
				// bypass the cluster client would not tell it, and it only
				// reloads on its own every 10s.
				m.cc.ReloadState(ctx)
				return cmd
			}
			if !clusterRetries(err) {
				return cmd
			}
		}
	}
	return m.cc.Do(ctx, args...)
}

// scriptDoer is where a store sends its scripts: straight to the key's
// master on a Cluster, else the client itself.
func scriptDoer(c redis.UniversalClient) doer {
	if cc, ok := c.(*redis.ClusterClient); ok {
		return masterDoer{cc}
	}
	return c
}

// clusterRetries reports whether err is a reply for which the script did
// not run, or (READONLY, raised by a script's first write) ran without
// changing anything, and the cluster client knows what to do.
func clusterRetries(err error) bool {
	for _, prefix := range [...]string{"MOVED", "ASK", "TRYAGAIN", "CLUSTERDOWN", "LOADING", "MASTERDOWN", "READONLY"} {
		if replyIs(err, prefix) {
			return true
		}
	}
	return false
}
