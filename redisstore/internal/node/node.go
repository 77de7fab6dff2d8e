package node

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/reqlock/reqlock/core/store"
)

// The scripts are plain files so that they can be read and reviewed as Lua.
// redis.NewScript sends them as EVALSHA and falls back to EVAL once per
// server that does not know them yet.
//
// acquire.lua and release.lua both hand out fences: fence.lua goes ahead of
// each, and each is sent as one script. acquire_record.lua goes ahead of
// the acquire's, so that a replay returns before fence.lua's functions are
// even defined.
var (
	//go:embed lua/fence.lua
	fenceLua string

	//go:embed lua/acquire_record.lua
	acquireRecordLua string
	//go:embed lua/acquire.lua
	acquireBody   string
	acquireLua    = acquireRecordLua + fenceLua + acquireBody
	acquireScript = redis.NewScript(acquireLua)

	//go:embed lua/release.lua
	releaseBody   string
	releaseLua    = fenceLua + releaseBody
	releaseScript = redis.NewScript(releaseLua)

	//go:embed lua/extend.lua
	extendLua    string
	extendScript = redis.NewScript(extendLua)

	//go:embed lua/ttl.lua
	ttlLua    string
	ttlScript = redis.NewScript(ttlLua)

	//go:embed lua/release_record.lua
	releaseRecordLua    string
	releaseRecordScript = redis.NewScript(releaseRecordLua)

	// The lean scripts: the path of a lock nobody else wants, with numbers
	// for fences. What they leave to the scripts above, they answer with
	// "again".
	//go:embed lua/acquire_lean.lua
	acquireLeanLua    string
	acquireLeanScript = redis.NewScript(acquireLeanLua)

	//go:embed lua/release_lean.lua
	releaseLeanLua    string
	releaseLeanScript = redis.NewScript(releaseLeanLua)
)

// fenceSuffix names a lock's fence counter: appended after the {hash tag},
// so counter and lock share a Cluster slot.
const fenceSuffix = ":fence"

// recordSuffix names a key's recorded result, in the lock's slot.
const recordSuffix = ":record"

// queueSuffix names a key's line of waiters, in the lock's slot.
const queueSuffix = ":q"

// lineSignSuffix names the sign that a key's line may hold waiters, set
// as each joins: a release looks at the line only when the sign is there.
const lineSignSuffix = ":qn"

// wakeChannel is where release.lua tells a Locker (instance) of the
// releases that concern its waiters: the keys' prefix, "wake:", and the
// instance's id.
func wakeChannel(prefix, instance string) string { return prefix + "wake:" + instance }

// cancelInfix names the marker cancel.lua leaves for a token: lock key +
// infix + token, in the lock's slot.
const cancelInfix = ":cancel:"

// cancelKey is the key of token's cancel marker for the lock key.
func cancelKey(key, token string) string { return key + cancelInfix + token }

// fenceTTL is how long a fence counter outlives the last use of its lock:
// long enough that a backward step of the server clock within it cannot
// reorder fences, short enough that one-off keys do not pile up.
func fenceTTL(lease time.Duration) time.Duration {
	return max(10*lease, time.Minute)
}

// Node keeps locks in Redis: a single node, a Cluster, or a Sentinel
// failover client, through redis.UniversalClient. Each operation is one
// script, one round trip.
//
// Create the client with ContextTimeoutEnabled: true. Without it go-redis
// ignores context deadlines on the socket and a hung Redis holds a caller for
// the client's ReadTimeout (3s by default) instead of the caller's deadline.
type Node struct {
	c     redis.UniversalClient
	d     doer // where scripts go: c, or on a Cluster the key's master
	boxed atomic.Pointer[boxedTTL]
	acks  *replicaAcks // nil unless WithReplicaAcks
	// resends: the client may resend a command (see mayResend), so a
	// waiter's Leave leaves a cancel marker (see wake.go).
	resends bool
	// resend is the client's retry setting, which sendAcquire follows;
	// resent, the tokens whose acquire may have a copy on its way, whose
	// release leaves a cancel marker (see Release and resend.go).
	// markAlways: a client of a type whose resending the store cannot take
	// over, so every release marks.
	resend     resendPolicy
	resent     *resentTokens
	markAlways bool
	// store.WakeAll: a release with nobody in line tells every listener anyway
	// (a Redlock store's node: its waiters do not queue).
	wakeAll bool
	// clock reckons the server's clock for the fences (clock.go).
	clock serverClock
}

// New returns a store over c. It panics if c is nil, and logs a
// warning (to slog.Default, once per client) if c was created without
// ContextTimeoutEnabled.
func New(c redis.UniversalClient) *Node {
	if c == nil {
		panic("reqlock: redisstore.New: nil client")
	}
	warnIfIgnoresDeadlines(c)
	n := &Node{c: c, d: scriptDoer(c), resends: mayResend(c), resent: &resentTokens{}}
	var known bool
	n.resend, known = resendPolicyOf(c)
	n.markAlways = n.resends && !known
	return n
}

// marks reports whether the release of token leaves its cancel marker: a
// copy of its acquire may still be on its way.
func (s *Node) marks(token string) bool {
	return s.markAlways || s.resent.has(token)
}

// Acquire implements store.Store: SET NX PX plus the fence, or the holder's PTTL.
func (s *Node) Acquire(ctx context.Context, l store.Lease) (store.Grant, error) {
	g, _, err := s.acquire(ctx, l, false, "")
	return g, err
}

// acquire is Acquire, and with withRecord AcquireOrRecord; waiter is the
// wait whose attempt it is, "" for none.
func (s *Node) acquire(ctx context.Context, l store.Lease, withRecord bool, waiter string) (store.Grant, []byte, error) {
	var a acquireAnswer
	var resent bool
	var err error
	if s.acks != nil {
		a, resent, err = s.acquireAcked(ctx, l, withRecord)
	} else {
		a, resent, err = s.acquireLean(ctx, l, s.clock.now(), withRecord)
	}
	if resent {
		a, err = s.voidRefused(ctx, l, waiter, a, resent, err)
	}
	return granted(l, a, err)
}

// acquireLean runs acquire_lean.lua, and acquire.lua when it answers
// "again"; clock is the fence's clock in µs (the server's as reckoned, or
// redlock.Store's own), nil to have the script ask the server. resent: a
// copy may still be on its way (see sendAcquire).
func (s *Node) acquireLean(ctx context.Context, l store.Lease, clock any, withRecord bool) (a acquireAnswer, resent bool, err error) {
	ttl, fttl := s.leaseArgs(l.TTL)
	marking := withRecord && l.Mark.Retention > 0
	var call scriptCall
	var args []any
	switch {
	case marking:
		call, args = leanMarkCall, leanMarkArgs(l, ttl, fttl, clock)
	case withRecord:
		call, args = leanRecordCall, recordArgs(l, ttl, fttl, 1)
	default:
		call, args = leanCall, acquireArgs(l, ttl, fttl, 1)
	}
	var sent time.Time
	switch {
	case clock == nil:
		sent = time.Now()
	case !marking:
		args = append(args, clock)
	}
	cmd, resent := s.sendAcquire(ctx, call, args, l.Token)
	a, err = acquireReply(cmd)
	if a.clock > 0 && clock == nil {
		s.clock.read(sent, a.clock)
	}
	if !errors.Is(err, errAgain) {
		return a, resent, err
	}
	call, args = plainAcquire(l, ttl, fttl, clock, withRecord)
	cmd, again := s.sendAcquire(ctx, call, args, l.Token)
	a, err = acquireReply(cmd)
	return a, resent || again, err
}

// granted turns an acquire's answer into what the store.Store and store.Recorder
// methods return.
func granted(l store.Lease, a acquireAnswer, err error) (store.Grant, []byte, error) {
	switch {
	case err != nil:
		return store.Grant{}, nil, err
	case a.record != nil:
		return store.Grant{}, a.record, nil
	case a.fence == 0:
		return store.Grant{}, nil, &store.NotObtainedError{Remaining: a.remaining, LastFence: a.lastFence}
	}
	return store.Grant{Fence: a.fence, Validity: store.Validity(l.TTL), InDoubt: a.doubt}, nil, nil
}

// AcquireOrRecord implements store.Recorder: the acquire and the look-up of the
// key's record in one script, one round trip.
func (s *Node) AcquireOrRecord(ctx context.Context, l store.Lease) (store.Grant, []byte, error) {
	return s.acquire(ctx, l, true, "")
}

// ReleaseRecording implements store.Recorder: the token check, the record and
// the release in one script, one round trip.
//
// With WithReplicaAcks, WAIT follows the script on its connection, and a
// record fewer replicas confirmed is ErrNotReplicated: the lock is released
// all the same, but a failover may lose the record.
func (s *Node) ReleaseRecording(ctx context.Context, key, token string, record []byte, retention time.Duration) error {
	marks := s.marks(token)
	call, args := releaseRecordCall, append(evalArgs(9), key, key+recordSuffix, key+queueSuffix, key+runSuffix)
	if marks {
		// As Release: a copy of the lock's own acquire may still land.
		call, args = releaseRecordMarkerCall, append(args, cancelKey(key, token))
	}
	args = append(args, token, record, ceilMillis(retention))
	if marks {
		args = append(args, releaseMarkerTTL.Milliseconds())
	}
	if s.acks != nil {
		return s.releaseRecordingAcked(ctx, key, call, args)
	}
	n, err := run(ctx, s.d, call, args).Int64()
	if err != nil {
		return err
	}
	s.resent.forget(token) // answered: the marker is there if it was asked for
	if n == 0 {
		return store.ErrNotHeld
	}
	return nil
}

// acquireArgs is the argument list of acquire.lua for l, from evalArgs, with
// room for extra arguments after it.
func acquireArgs(l store.Lease, ttl, fttl any, extra int) []any {
	return append(evalArgs(6+extra), l.Key, l.Key+fenceSuffix, cancelKey(l.Key, l.Token), l.Token, ttl, fttl)
}

// plainAcquire is the script call and argument list of an attempt that does
// not wait in line, asking for the key's record too when withRecord, and
// marking the run when l.Mark asks; clock is the fence's clock, nil for
// none.
func plainAcquire(l store.Lease, ttl, fttl, clock any, withRecord bool) (scriptCall, []any) {
	var call scriptCall
	var args []any
	switch {
	case withRecord && l.Mark.Retention > 0:
		if clock == nil {
			clock = ""
		}
		return acquireMarkCall, markedArgs(l, ttl, fttl, clock, "")
	case withRecord:
		call, args = acquireRecordCall, recordArgs(l, ttl, fttl, 1)
	default:
		call, args = acquireCall, acquireArgs(l, ttl, fttl, 1)
	}
	if clock != nil {
		args = append(args, clock)
	}
	return call, args
}

// leanMarkArgs is acquire_lean.lua's argument list that asks for the key's
// record and marks the run: the clock ("" for none) goes before the mark's
// arguments.
func leanMarkArgs(l store.Lease, ttl, fttl, clock any) []any {
	if clock == nil {
		clock = ""
	}
	return append(evalArgs(11), l.Key, l.Key+fenceSuffix, cancelKey(l.Key, l.Token), l.Key+recordSuffix, l.Key+runSuffix,
		l.Token, ttl, fttl, clock, ceilMillis(l.Mark.Retention), againArg(l.Mark.Again))
}

// markedArgs is acquire.lua's argument list that asks for the key's record
// and marks the run (KEYS[7]), for waiter ("" for none); clock is the
// fence's clock, or "".
func markedArgs(l store.Lease, ttl, fttl, clock any, waiter string) []any {
	return append(evalArgs(16), l.Key, l.Key+fenceSuffix, cancelKey(l.Key, l.Token), l.Key+recordSuffix, l.Key+queueSuffix,
		l.Key+lineSignSuffix, l.Key+runSuffix, l.Token, ttl, fttl, clock, waiter, fttl, "1",
		ceilMillis(l.Mark.Retention), againArg(l.Mark.Again))
}

// againArg is RunMark.Again as the scripts take it.
func againArg(again bool) any {
	if again {
		return "1"
	}
	return "0"
}

// recordArgs is acquire.lua's argument list that also asks for the key's
// record: the record's key, last, is the ask (acquire_record.lua).
func recordArgs(l store.Lease, ttl, fttl any, extra int) []any {
	return append(evalArgs(7+extra), l.Key, l.Key+fenceSuffix, cancelKey(l.Key, l.Token), l.Key+recordSuffix,
		l.Token, ttl, fttl)
}

// queuedArgs is acquire.lua's argument list for a waiter in line; clock is
// the fence's clock (see acquireLean), or "".
func queuedArgs(l store.Lease, ttl, fttl any, clock any, waiter string, withRecord bool) []any {
	flag := ""
	if withRecord {
		flag = "1"
	}
	return append(evalArgs(13), l.Key, l.Key+fenceSuffix, cancelKey(l.Key, l.Token), l.Key+recordSuffix, l.Key+queueSuffix,
		l.Key+lineSignSuffix, l.Token, ttl, fttl, clock, waiter, fttl, flag) // the line lives as long as the fence counter
}

// acquireReply reads acquire.lua's answer: the fence, a string of digits
// (Lua's doubles would round a fence above 2^53), when the lock is ours; a
// record, when one was asked for and is there; otherwise fence 0 and the
// holder's remaining lease (0: unknown), and for a waiter the last fence
// handed out (0: none or unknown).
func acquireReply(cmd *redis.Cmd) (a acquireAnswer, err error) {
	v, err := cmd.Result()
	if err != nil {
		return a, err
	}
	switch v := v.(type) {
	case string:
		if v == "again" {
			return a, errAgain
		}
		if a.fence, err = strconv.ParseUint(v, 10, 64); err == nil && a.fence > 0 {
			return a, nil
		}
	case int64:
		if v > 0 {
			a.fence = uint64(v)
		} else {
			a.remaining = time.Duration(-v) * time.Millisecond
		}
		return a, nil
	case []any:
		switch len(v) {
		case 1:
			if r, ok := v[0].(string); ok {
				a.record = []byte(r)
				return a, nil
			}
		case 3:
			// The fence, the server's clock or 0, and whether the run
			// before is in doubt: an acquire that marked the run.
			clock, ok1 := v[1].(int64)
			doubt, ok2 := v[2].(int64)
			if ok1 && ok2 && clock >= 0 {
				if a.fence = fenceOf(v[0]); a.fence > 0 {
					a.clock, a.doubt = clock, doubt == 1
					return a, nil
				}
			}
		case 2:
			// The fence and the server's clock (acquire_lean.lua, sent
			// without one).
			if fence, ok := v[0].(int64); ok && fence > 0 {
				if clock, ok := v[1].(int64); ok && clock > 0 {
					a.fence, a.clock = uint64(fence), clock
					return a, nil
				}
			}
			pttl, ok1 := v[0].(int64)
			last, ok2 := v[1].(string)
			if ok1 && ok2 && pttl <= 0 {
				a.remaining = time.Duration(-pttl) * time.Millisecond
				if n, err := strconv.ParseUint(last, 10, 64); err == nil { // '': 0
					a.lastFence = n
				}
				return a, nil
			}
		}
	}
	return acquireAnswer{}, fmt.Errorf("reqlock: acquire: unexpected reply %v", v)
}

// fenceOf reads a fence as the scripts send it: a number below 2^53, a
// string of digits above; 0 for anything else.
func fenceOf(v any) uint64 {
	switch v := v.(type) {
	case int64:
		if v > 0 {
			return uint64(v)
		}
	case string:
		if n, err := strconv.ParseUint(v, 10, 64); err == nil {
			return n
		}
	}
	return 0
}

// errAgain is acquire_lean.lua's answer when it leaves the attempt to
// acquire.lua, having changed nothing.
var errAgain = errors.New("reqlock: acquire: again, in full")

// acquireAnswer is what one acquire.lua call said.
type acquireAnswer struct {
	fence     uint64        // the lock is ours, with this fence; 0: it is not
	remaining time.Duration // not ours: the holder's remaining lease, 0 if unknown
	lastFence uint64        // not ours, to a waiter: the last fence handed out, 0 if none
	record    []byte        // the key's record, when asked for and there
	clock     int64         // the server's clock in µs, when the script read it for the caller
	doubt     bool          // the run was marked, and the one before it is in doubt
}

// leaseArgs returns the lease and the fence counter's lifetime in
// milliseconds, boxed once per TTL: a Locker uses one TTL, and boxing them
// anew would cost two allocations per acquire.
func (s *Node) leaseArgs(ttl time.Duration) (lease, fence any) {
	if c := s.boxed.Load(); c != nil && c.ttl == ttl {
		return c.lease, c.fence
	}
	c := &boxedTTL{ttl: ttl, lease: ttl.Milliseconds(), fence: fenceTTL(ttl).Milliseconds()}
	s.boxed.Store(c)
	return c.lease, c.fence
}

type boxedTTL struct {
	ttl          time.Duration
	lease, fence any
}

// Extend implements store.Store. All leases go in one pipeline: one round trip per
// node however many locks the watchdog renews.
func (s *Node) Extend(ctx context.Context, leases []store.Lease) []store.Renewal {
	out := make([]store.Renewal, len(leases))
	cmds := s.extendAll(ctx, leases, extendScript.EvalSha)
	var retry []int
	for i, cmd := range cmds {
		if replyIs(cmd.Err(), "NOSCRIPT") {
			retry = append(retry, i)
		}
	}
	if len(retry) > 0 { // a server that restarted or failed over lost its script cache
		again := make([]store.Lease, len(retry))
		for j, i := range retry {
			again[j] = leases[i]
		}
		for j, cmd := range s.extendAll(ctx, again, extendScript.Eval) {
			cmds[retry[j]] = cmd
		}
	}
	for i, cmd := range cmds {
		out[i] = extendResult(leases[i], cmd)
	}
	return out
}

type evalFunc func(ctx context.Context, c redis.Scripter, keys []string, args ...any) *redis.Cmd

func (s *Node) extendAll(ctx context.Context, leases []store.Lease, eval evalFunc) []*redis.Cmd {
	cmds := make([]*redis.Cmd, len(leases))
	if len(leases) == 1 { // Refresh and the common tick: no pipeline to build
		l := leases[0]
		cmds[0] = eval(ctx, s.c, []string{l.Key, l.Key + fenceSuffix},
			l.Token, l.TTL.Milliseconds(), fenceTTL(l.TTL).Milliseconds())
		return cmds
	}
	_, _ = s.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, l := range leases {
			cmds[i] = eval(ctx, p, []string{l.Key, l.Key + fenceSuffix},
				l.Token, l.TTL.Milliseconds(), fenceTTL(l.TTL).Milliseconds())
		}
		return nil
	})
	return cmds
}

func extendResult(l store.Lease, cmd *redis.Cmd) store.Renewal {
	n, err := cmd.Int64()
	switch {
	case err != nil:
		return store.Renewal{Err: err}
	case n == 0:
		return store.Renewal{Err: store.ErrNotHeld}
	default:
		return store.Renewal{Validity: store.Validity(l.TTL)}
	}
}

// Cancel implements store.Canceler: the lock is deleted if l.Token holds it, and
// a marker left for the token, for fenceTTL(l.TTL), makes an acquire with
// that token that is still on its way give the lock straight back when it
// lands; a run mark of the token's own, which the acquire may have left as
// it landed, goes too (store.AcquireMarker). One round trip.
func (s *Node) Cancel(ctx context.Context, l store.Lease) error {
	if err := s.release(ctx, l.Key, l.Token, fenceTTL(l.TTL), "", true).Err(); err != nil {
		return storeErr(err)
	}
	s.resent.forget(l.Token) // the marker is there
	return nil
}

// releaseMarkerTTL is how long a release leaves its cancel marker, when
// it leaves one.
const releaseMarkerTTL = time.Minute

// Release implements store.Store: compare the token, then hand the lock to the
// next waiter in line, or DEL (release_lean.lua). When the lock's acquire
// was sent more than once (see resend.go), a copy of it may still be on its
// way, and would take the lock again for nobody: then the release
// (release.lua) also leaves the token's cancel marker, for
// releaseMarkerTTL.
func (s *Node) Release(ctx context.Context, key, token string) error {
	var cmd *redis.Cmd
	if s.marks(token) {
		cmd = s.release(ctx, key, token, releaseMarkerTTL, "", false)
	} else {
		all := any("")
		if s.wakeAll {
			all = "1"
		}
		cmd = run(ctx, s.d, leanReleaseCall, append(evalArgs(7), key, key+queueSuffix, key+fenceSuffix, key+lineSignSuffix, token, handOffMs, all))
	}
	err := releaseResult(cmd)
	if err == nil || errors.Is(err, store.ErrNotHeld) {
		s.resent.forget(token) // answered: the marker is there if it was asked for
	}
	return err
}

// release runs release.lua: token's lock (or '~' + waiter's hand-off) is
// passed on; marker > 0 leaves the token's cancel marker; leaving takes
// that waiter out of the line first; unmark drops the run mark if it is
// token's own (an acquire that marked a run that never started, see
// store.AcquireMarker).
func (s *Node) release(ctx context.Context, key, token string, marker time.Duration, leaving string, unmark bool) *redis.Cmd {
	markerMs, all := any(""), any("")
	if marker > 0 {
		markerMs = marker.Milliseconds()
	}
	if s.wakeAll {
		all = "1"
	}
	call, args := releaseCall, append(evalArgs(10), key, key+queueSuffix, key+fenceSuffix)
	switch {
	case unmark:
		// KEYS[4] is set only with markerMs: without one, the run mark's
		// key stands in, so that no cancel key is named for nothing.
		markerKey := key + runSuffix
		if marker > 0 {
			markerKey = cancelKey(key, token)
		}
		call, args = releaseUnmarkCall, append(args, markerKey, key+runSuffix)
	case marker > 0:
		call, args = releaseMarkerCall, append(args, cancelKey(key, token))
	}
	return run(ctx, s.d, call, append(args, token, handOffMs, markerMs, all, leaving))
}

// ceilMillis is d in whole milliseconds, rounded up: Redis refuses PX 0.
func ceilMillis(d time.Duration) int64 { return int64((d + time.Millisecond - 1) / time.Millisecond) }

// handOffMs is store.HandOffTimeout as release.lua takes it, boxed once.
var handOffMs any = store.HandOffTimeout.Milliseconds()

func releaseResult(cmd *redis.Cmd) error {
	n, err := cmd.Int64()
	if err != nil {
		return storeErr(err)
	}
	if n == 0 {
		return store.ErrNotHeld
	}
	return nil
}

// storeErr marks an error of a closed client as store.ErrStoreClosed, which is
// how the Locker knows that retrying an undo over it is pointless.
func storeErr(err error) error {
	if errors.Is(err, redis.ErrClosed) && !errors.Is(err, store.ErrStoreClosed) {
		return fmt.Errorf("%w: %w", store.ErrStoreClosed, err)
	}
	return err
}

// Kind implements store.Kinder: a Sentinel failover client is a *redis.Client,
// hence redis; every *redis.ClusterClient is redis_cluster, as the store
// runs its scripts on the key's master.
func (s *Node) Kind() string {
	if _, ok := s.c.(*redis.ClusterClient); ok {
		return "redis_cluster"
	}
	return "redis"
}

// TellsLapses implements store.LapseTeller: a Redis holder learns of a lapsed
// lease from its own clock, so acquires carry no notice.
func (*Node) TellsLapses() bool { return false }

// TTL implements store.Store.
func (s *Node) TTL(ctx context.Context, key, token string) (time.Duration, error) {
	n, err := run(ctx, s.d, ttlCall, append(evalArgs(2), key, token)).Int64()
	if err != nil {
		return 0, err
	}
	if n < 0 {
		return 0, store.ErrNotHeld
	}
	return time.Duration(n) * time.Millisecond, nil
}

// giveBack undoes an acquire of l that may have taken the lock but cannot
// hand it out (too few replicas acknowledged it), on a context of its own
// and bounded: never past the lease, after which there is nothing left to
// give back, and never long. It cancels rather than releases: a copy of the
// acquire may still be on its way.
func giveBack(ctx context.Context, s *Node, l store.Lease) {
	ctx, stop := context.WithTimeout(context.WithoutCancel(ctx), min(l.TTL, 3*time.Second))
	defer stop()
	_ = s.Cancel(ctx, l)
}
