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

// Process takes a command as run builds it: verb, script, numkeys, then
// the keys.
func (m masterDoer) Process(ctx context.Context, cmd redis.Cmder) error {
	_, err := m.process(ctx, cmd)
	return err
}

// process is Process; looped reports whether the call went through the
// cluster client (a redirect, a node that cannot serve it yet, no master
// known), whose loop sends a command again after a read timeout, whatever
// MaxRetries says: a copy of it may then still be on its way.
func (m masterDoer) process(ctx context.Context, cmd redis.Cmder) (looped bool, err error) {
	if key, ok := cmd.Args()[3].(string); ok {
		if node, err := m.cc.MasterForKey(ctx, key); err == nil {
			err := node.Process(ctx, cmd)
			var answer redis.Error
			if err != nil && !errors.As(err, &answer) {
				// The master did not answer (failed over, unreachable). The
				// call may have run, so it is not sent again from here (the
				// node client resends it only if ClusterOptions.MaxRetries
				// asks it to, and an acquire it never does: see resend.go);
				// but the slot map is refreshed, since calls that bypass the
				// cluster client would not tell it, and it only reloads on
				// its own every 10s.
				m.cc.ReloadState(ctx)
				return false, err
			}
			if !clusterRetries(err) {
				return false, err
			}
		}
	}
	return true, m.cc.Process(ctx, cmd)
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
