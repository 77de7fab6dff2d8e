package node

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// scriptCall is one of our scripts, ready to send with its arity.
type scriptCall struct {
	sha     any // pre-boxed, so sending costs no allocation for it
	source  any
	numKeys int
}

func newScriptCall(s *redis.Script, source string, numKeys int) scriptCall {
	return scriptCall{sha: s.Hash(), source: source, numKeys: numKeys}
}

var (
	acquireCall = newScriptCall(acquireScript, acquireLua, 3)
	// acquireRecordCall is the same script, also asked for the key's record.
	acquireRecordCall = newScriptCall(acquireScript, acquireLua, 4)
	// acquireQueuedCall is the same script for a waiter in line.
	acquireQueuedCall = newScriptCall(acquireScript, acquireLua, 6)
	// acquireMarkCall is the same script asked for the record, and to mark
	// the run (store.AcquireMarker), in line or not.
	acquireMarkCall   = newScriptCall(acquireScript, acquireLua, 7)
	releaseRecordCall = newScriptCall(releaseRecordScript, releaseRecordLua, 4)
	// releaseRecordMarkerCall is the same script, also leaving a cancel
	// marker.
	releaseRecordMarkerCall = newScriptCall(releaseRecordScript, releaseRecordLua, 5)
	releaseCall             = newScriptCall(releaseScript, releaseLua, 3)
	// releaseMarkerCall is the same script, also leaving a cancel marker;
	// releaseUnmarkCall, also dropping the token's own run mark.
	releaseMarkerCall = newScriptCall(releaseScript, releaseLua, 4)
	releaseUnmarkCall = newScriptCall(releaseScript, releaseLua, 5)
	ttlCall           = newScriptCall(ttlScript, ttlLua, 1)

	// leanCall is acquire_lean.lua; leanRecordCall the same script, also
	// asked for the key's record.
	leanCall        = newScriptCall(acquireLeanScript, acquireLeanLua, 3)
	leanRecordCall  = newScriptCall(acquireLeanScript, acquireLeanLua, 4)
	leanMarkCall    = newScriptCall(acquireLeanScript, acquireLeanLua, 5) // the record, and the run marked
	leanReleaseCall = newScriptCall(releaseLeanScript, releaseLeanLua, 4)
)

// doer is where script calls go: a client, a pipeline, or a Cluster's
// master for the key (masterDoer).
type doer interface {
	Process(ctx context.Context, cmd redis.Cmder) error
}

// evalArgs returns the argument list of a script call with its first three
// slots (verb, script, numkeys) left for run to fill: callers append the
// keys and arguments, in one allocation.
func evalArgs(n int) []any { return make([]any, 3, 3+n) }

// run sends EVALSHA, and EVAL once if the server does not have the script
// (first use, a restart, a failover): what redis.Script.Run does, without its
// per-call copies of keys and arguments, since acquire and release are the
// hot path. args comes from evalArgs.
func run(ctx context.Context, c doer, sc scriptCall, args []any) *redis.Cmd {
	cmd, _ := send(ctx, c, sc, args, false)
	return cmd
}

// send is run; with once, go-redis sends each command at most once and
// leaves resending to the caller (see resend.go). looped reports whether a
// Cluster's call went through the cluster client's own loop (masterDoer),
// which may have sent it more than once.
func send(ctx context.Context, c doer, sc scriptCall, args []any, once bool) (cmd *redis.Cmd, looped bool) {
	args[0], args[1], args[2] = "evalsha", sc.sha, sc.numKeys
	cmd = redis.NewCmd(ctx, args...)
	looped = process(ctx, c, cmder(cmd, once))
	if replyIs(cmd.Err(), "NOSCRIPT") {
		args[0], args[1] = "eval", sc.source
		cmd = redis.NewCmd(ctx, args...)
		looped = process(ctx, c, cmder(cmd, once)) || looped
	}
	return cmd, looped
}

// process is c.Process(ctx, cmd), and reports whether cmd went through a
// Cluster client's own loop (see masterDoer.process).
func process(ctx context.Context, c doer, cmd redis.Cmder) (looped bool) {
	if m, ok := c.(masterDoer); ok {
		looped, _ = m.process(ctx, cmd)
		return looped
	}
	_ = c.Process(ctx, cmd)
	return false
}

// onceCmd is a command that go-redis does not send again when its reply is
// lost (NoRetry): the store decides that itself, and remembers it. One
// pointer wide, it goes into an interface without an allocation.
type onceCmd struct{ *redis.Cmd }

// NoRetry implements redis.Cmder.
func (onceCmd) NoRetry() bool { return true }

// cmder is cmd as go-redis takes it: as a onceCmd when once, else as is, so
// that hooks see the type they expect.
func cmder(cmd *redis.Cmd, once bool) redis.Cmder {
	if once {
		return onceCmd{cmd}
	}
	return cmd
}

// replyIs reports whether err is a Redis error reply starting with prefix.
// It is redis.HasErrorPrefix without that function's allocation when err is
// nil, which on the hot path it nearly always is.
func replyIs(err error, prefix string) bool {
	return err != nil && redis.HasErrorPrefix(err, prefix)
}

// ScriptOf names the script a command sends ("acquire", "release",
// "extend", "ttl", "release_record"), "" for any other command: for tests
// that hold back one node's scripts with a client hook.
func ScriptOf(args []any) string {
	if len(args) < 2 {
		return ""
	}
	for _, sc := range []struct {
		name string
		call scriptCall
	}{
		{"acquire", acquireCall}, {"acquire", leanCall}, {"release", releaseCall}, {"release", leanReleaseCall}, {"extend", newScriptCall(extendScript, extendLua, 0)},
		{"ttl", ttlCall}, {"release_record", releaseRecordCall},
	} {
		if args[1] == sc.call.sha || args[1] == sc.call.source {
			return sc.name
		}
	}
	return ""
}

// LoadScripts loads the acquire and release scripts (lean and full) on c
// ahead of use, so
// that no NOSCRIPT retry sends one of them twice.
func LoadScripts(ctx context.Context, c redis.Scripter) error {
	for _, s := range []*redis.Script{acquireLeanScript, releaseLeanScript, acquireScript, releaseScript} {
		if err := s.Load(ctx, c).Err(); err != nil {
			return err
		}
	}
	return nil
}
