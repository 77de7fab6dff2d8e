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
	acquireQueuedCall = newScriptCall(acquireScript, acquireLua, 5)
	releaseRecordCall = newScriptCall(releaseRecordScript, releaseRecordLua, 3)
	// releaseRecordMarkerCall is the same script, also leaving a cancel
	// marker.
	releaseRecordMarkerCall = newScriptCall(releaseRecordScript, releaseRecordLua, 4)
	releaseCall             = newScriptCall(releaseScript, releaseLua, 3)
	// releaseMarkerCall is the same script, also leaving a cancel marker.
	releaseMarkerCall = newScriptCall(releaseScript, releaseLua, 4)
	ttlCall           = newScriptCall(ttlScript, ttlLua, 1)
)

// doer is what both a client and a pipeline can send a raw command through.
type doer interface {
	Do(ctx context.Context, args ...any) *redis.Cmd
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
	args[0], args[1], args[2] = "evalsha", sc.sha, sc.numKeys
	cmd := c.Do(ctx, args...)
	if replyIs(cmd.Err(), "NOSCRIPT") {
		args[0], args[1] = "eval", sc.source
		cmd = c.Do(ctx, args...)
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
		{"acquire", acquireCall}, {"release", releaseCall}, {"extend", newScriptCall(extendScript, extendLua, 0)},
		{"ttl", ttlCall}, {"release_record", releaseRecordCall},
	} {
		if args[1] == sc.call.sha || args[1] == sc.call.source {
			return sc.name
		}
	}
	return ""
}

// LoadScripts loads the acquire and release scripts on c ahead of use, so
// that no NOSCRIPT retry sends one of them twice.
func LoadScripts(ctx context.Context, c redis.Scripter) error {
	for _, s := range []*redis.Script{acquireScript, releaseScript} {
		if err := s.Load(ctx, c).Err(); err != nil {
			return err
		}
	}
	return nil
}
