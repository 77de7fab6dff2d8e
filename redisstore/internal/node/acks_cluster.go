package node

import (
	"context"
	"net"
	"strings"

	"github.com/redis/go-redis/v9"
)

// redirectTarget is the cluster client's own client for the node a MOVED or
// ASK reply names, or nil when the cluster does not know one. A MOVED also
// tells the cluster client to learn the new owner, in the background, as it
// would for its own commands; an ASK is only for this one call.
//
// The node clients are remembered by address: during a slot migration every
// acquire for the slot may be redirected, and looking one up in the cluster
// client costs a fresh slot map each time.
func (a *replicaAcks) redirectTarget(ctx context.Context, cc *redis.ClusterClient, redirect error) *redis.Client {
	addr := normalAddr(redirectAddr(redirect))
	if addr == "" {
		return nil
	}
	if c, ok := a.nodes.Load(addr); ok {
		if replyIs(redirect, "MOVED") {
			cc.ReloadState(ctx)
		}
		return c.(*redis.Client)
	}
	// ForEachShard reloads the slot map first, which also covers the MOVED.
	_ = cc.ForEachShard(ctx, func(_ context.Context, c *redis.Client) error {
		a.nodes.Store(normalAddr(c.Options().Addr), c)
		return nil
	})
	if c, ok := a.nodes.Load(addr); ok {
		return c.(*redis.Client)
	}
	return nil
}

// forgetNode drops a remembered node client that the cluster client has
// closed (the node left the cluster for a while), so that redirectTarget
// looks the node up afresh.
func (a *replicaAcks) forgetNode(node ackNode) {
	if c, ok := node.(*redis.Client); ok {
		a.nodes.CompareAndDelete(normalAddr(c.Options().Addr), c)
	}
}

// redirectAddr is the address in a MOVED or ASK reply: "MOVED 3999 host:port".
func redirectAddr(err error) string {
	f := strings.Fields(err.Error())
	if len(f) < 3 {
		return ""
	}
	return f[2]
}

// normalAddr writes host:port one way, so that a redirect's address matches
// a client's: Redis writes an IPv6 host bare ("::1:7000"), go-redis in
// brackets ("[::1]:7000").
func normalAddr(addr string) string {
	i := strings.LastIndexByte(addr, ':')
	if i < 0 {
		return addr
	}
	host := strings.TrimSuffix(strings.TrimPrefix(addr[:i], "["), "]")
	return net.JoinHostPort(host, addr[i+1:])
}
