package node

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/internal/redistest"
)

// scriptCalls keeps the argument lists of the acquire scripts (lean or
// full, which share their layout) a client sends,
// alone or in a pipeline, as Redis receives them.
type scriptCalls struct {
	mu    sync.Mutex
	calls [][]any
}

func (s *scriptCalls) DialHook(next redis.DialHook) redis.DialHook { return next }

func (s *scriptCalls) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		s.keep(cmd)
		return next(ctx, cmd)
	}
}

func (s *scriptCalls) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			s.keep(cmd)
		}
		return next(ctx, cmds)
	}
}

func (s *scriptCalls) keep(cmd redis.Cmder) {
	args := cmd.Args()
	if len(args) < 3 || ScriptOf(args) != "acquire" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, append([]any(nil), args...))
}

// last is the last acquire sent, its keys and arguments as strings.
func (s *scriptCalls) last(t *testing.T) (keys, argv []string) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.calls) == 0 {
		t.Fatal("no acquire was sent")
	}
	args := s.calls[len(s.calls)-1]
	s.calls = nil
	n, err := strconv.Atoi(fmt.Sprint(args[2]))
	if err != nil || 3+n > len(args) {
		t.Fatalf("numkeys %v of %v", args[2], args)
	}
	for i, a := range args[3:] {
		if i < n {
			keys = append(keys, fmt.Sprint(a))
		} else {
			argv = append(argv, fmt.Sprint(a))
		}
	}
	return keys, argv
}

func equalStrings(t *testing.T, what string, got, want []string) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) || len(got) != len(want) {
		t.Errorf("%s: %q, want %q", what, got, want)
	}
}

// Each kind of attempt sends acquire_lean.lua or acquire.lua the keys and arguments their headers
// documents, in that order and no more: plain, with the record look-up, in
// line, on a Redlock node (with and without a line) and acked by replicas.
func TestAcquireArgumentListsFollowTheScriptLayout(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	calls := &scriptCalls{}
	c.AddHook(calls)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	const ttl = 2 * time.Second
	lease := strconv.FormatInt(ttl.Milliseconds(), 10)
	fence := strconv.FormatInt(fenceTTL(ttl).Milliseconds(), 10)
	keysOf := func(key, token string, more ...string) []string {
		return append([]string{key, key + fenceSuffix, cancelKey(key, token)}, more...)
	}
	s := New(c)

	t.Run("plain", func(t *testing.T) {
		l := store.Lease{Key: "reqlock:{args-plain}", Token: "t1", TTL: ttl}
		if _, err := s.Acquire(ctx, l); err != nil {
			t.Fatal(err)
		}
		keys, argv := calls.last(t)
		equalStrings(t, "keys", keys, keysOf(l.Key, l.Token))
		equalStrings(t, "argv", argv, []string{l.Token, lease, fence})
		if p := c.PTTL(ctx, l.Key).Val(); p <= 0 || p > ttl {
			t.Errorf("lock PTTL %v, want up to %v", p, ttl)
		}
		if p := c.PTTL(ctx, l.Key+fenceSuffix).Val(); p <= ttl || p > fenceTTL(ttl) {
			t.Errorf("fence counter PTTL %v, want up to %v", p, fenceTTL(ttl))
		}
	})

	// The first acquire had the script read the server's clock; the next
	// ones send the clock as the store reckons it from that reading.
	t.Run("clock", func(t *testing.T) {
		l := store.Lease{Key: "reqlock:{args-clock}", Token: "t1", TTL: ttl}
		g, err := s.Acquire(ctx, l)
		if err != nil {
			t.Fatal(err)
		}
		keys, argv := calls.last(t)
		equalStrings(t, "keys", keys, keysOf(l.Key, l.Token))
		if len(argv) != 4 {
			t.Fatalf("argv %q, want token, lease, fence lifetime, clock", argv)
		}
		equalStrings(t, "argv", argv[:3], []string{l.Token, lease, fence})
		clock := clockArg(t, argv[3])
		if g.Fence != uint64(clock) {
			t.Errorf("fence %d, want the clock %d on a fresh counter", g.Fence, clock)
		}
	})

	t.Run("record", func(t *testing.T) {
		l := store.Lease{Key: "reqlock:{args-record}", Token: "t1", TTL: ttl}
		if _, rec, err := s.AcquireOrRecord(ctx, l); err != nil || rec != nil {
			t.Fatalf("first: %q, %v", rec, err)
		}
		keys, argv := calls.last(t)
		equalStrings(t, "keys", keys, keysOf(l.Key, l.Token, l.Key+recordSuffix))
		equalStrings(t, "argv", argv[:min(3, len(argv))], []string{l.Token, lease, fence})
		if len(argv) != 4 {
			t.Fatalf("argv %q, want the clock last", argv)
		}
		clockArg(t, argv[3])
		if err := s.ReleaseRecording(ctx, l.Key, l.Token, []byte("done"), time.Minute); err != nil {
			t.Fatal(err)
		}
		l.Token = "t2"
		if g, rec, err := s.AcquireOrRecord(ctx, l); err != nil || string(rec) != "done" || g.Fence != 0 {
			t.Fatalf("after the record: %+v, %q, %v", g, rec, err)
		}
		if n := c.Exists(ctx, l.Key).Val(); n != 0 {
			t.Error("a look-up that found the record took the lock")
		}
	})

	// The record is looked for only when asked: by a fourth and last key,
	// or by a waiter's flag.
	t.Run("record only when asked", func(t *testing.T) {
		for _, c0 := range []struct {
			name    string
			want    bool
			acquire func(store.Lease) ([]byte, error)
		}{
			{"plain", false, func(l store.Lease) ([]byte, error) { _, err := s.Acquire(ctx, l); return nil, err }},
			{"with the record", true, func(l store.Lease) ([]byte, error) { _, rec, err := s.AcquireOrRecord(ctx, l); return rec, err }},
			{"in line", false, func(l store.Lease) ([]byte, error) {
				_, rec, err := s.AcquireQueued(ctx, l, "w9", false)
				return rec, err
			}},
			{"in line, with the record", true, func(l store.Lease) ([]byte, error) {
				_, rec, err := s.AcquireQueued(ctx, l, "w9", true)
				return rec, err
			}},
		} {
			l := store.Lease{Key: "reqlock:{args-ask-" + c0.name + "}", Token: "t1", TTL: ttl}
			if err := c.Set(ctx, l.Key+recordSuffix, "done", time.Minute).Err(); err != nil {
				t.Fatal(err)
			}
			rec, err := c0.acquire(l)
			if err != nil {
				t.Fatalf("%s: %v", c0.name, err)
			}
			took := c.Exists(ctx, l.Key).Val() == 1
			if got := string(rec) == "done"; got != c0.want || took == c0.want {
				t.Errorf("%s: record %q, lock taken %v; want the record %v", c0.name, rec, took, c0.want)
			}
		}
		calls.last(t) // forget them
	})

	t.Run("queued", func(t *testing.T) {
		l := store.Lease{Key: "reqlock:{args-queued}", Token: "holder", TTL: ttl}
		if _, err := s.Acquire(ctx, l); err != nil {
			t.Fatal(err)
		}
		w := store.Lease{Key: l.Key, Token: "~w1", TTL: ttl}
		for _, withRecord := range []bool{false, true} {
			_, _, err := s.AcquireQueued(ctx, w, "w1", withRecord)
			var taken *store.NotObtainedError
			if !errors.As(err, &taken) {
				t.Fatalf("waiter: %v, want not obtained", err)
			}
			flag := ""
			if withRecord {
				flag = "1"
			}
			keys, argv := calls.last(t)
			equalStrings(t, "keys", keys, keysOf(w.Key, w.Token, w.Key+recordSuffix, w.Key+queueSuffix, w.Key+lineSignSuffix))
			if len(argv) != 7 {
				t.Fatalf("argv %q, want 7", argv)
			}
			clockArg(t, argv[3])
			equalStrings(t, "argv", []string{argv[0], argv[1], argv[2], argv[4], argv[5], argv[6]},
				[]string{w.Token, lease, fence, "w1", fence, flag})
		}
		// The line's sign lives as long as the line.
		if p, q := c.PTTL(ctx, l.Key+lineSignSuffix).Val(), c.PTTL(ctx, l.Key+queueSuffix).Val(); p <= ttl || p < q-time.Second {
			t.Errorf("sign PTTL %v, line's %v", p, q)
		}
		// The line lives as long as a fence counter: longer than the lease.
		if p := c.PTTL(ctx, l.Key+queueSuffix).Val(); p <= ttl || p > fenceTTL(ttl) {
			t.Errorf("line PTTL %v, want above %v and up to %v", p, ttl, fenceTTL(ttl))
		}
		if q := c.LRange(ctx, l.Key+queueSuffix, 0, -1).Val(); len(q) != 1 || q[0] != "w1" {
			t.Errorf("line %q, want [w1]", q)
		}
	})

	// A Redlock node's acquire (AcquireAbove), with the clock the Redlock
	// store sends: its own in microseconds, formatted.
	t.Run("redlock", func(t *testing.T) {
		r := New(c)
		WakeEveryone(r)
		l := store.Lease{Key: "reqlock:{args-redlock}", Token: "t1", TTL: ttl}
		before := time.Now().UnixMicro()
		got, _, err := AcquireAbove(ctx, r, l, strconv.FormatInt(time.Now().UnixMicro(), 10), "")
		if err != nil {
			t.Fatal(err)
		}
		g := store.Grant{Fence: got}
		keys, argv := calls.last(t)
		equalStrings(t, "keys", keys, keysOf(l.Key, l.Token))
		if len(argv) != 4 {
			t.Fatalf("argv %q, want token, lease, fence lifetime, clock", argv)
		}
		equalStrings(t, "argv", argv[:3], []string{l.Token, lease, fence})
		clock, err := strconv.ParseInt(argv[3], 10, 64)
		if err != nil || clock < before || clock > time.Now().UnixMicro() {
			t.Errorf("clock %q, want our clock in microseconds", argv[3])
		}
		if g.Fence != uint64(clock) {
			t.Errorf("fence %d, want the clock %d on a fresh counter", g.Fence, clock)
		}

		w := store.Lease{Key: l.Key, Token: "~w2", TTL: ttl}
		got, _, err = AcquireAbove(ctx, r, w, strconv.FormatInt(time.Now().UnixMicro(), 10), "w2")
		if err != nil || got != 0 {
			t.Fatalf("waiter: fence %d, %v, want the lock taken", got, err)
		}
		keys, argv = calls.last(t)
		equalStrings(t, "waiter keys", keys, keysOf(w.Key, w.Token, w.Key+recordSuffix, w.Key+queueSuffix, w.Key+lineSignSuffix))
		if len(argv) != 7 {
			t.Fatalf("waiter argv %q, want 7", argv)
		}
		if _, err := strconv.ParseUint(argv[3], 10, 64); err != nil {
			t.Errorf("waiter clock %q, want digits", argv[3])
		}
		equalStrings(t, "waiter argv", []string{argv[0], argv[1], argv[2], argv[4], argv[5], argv[6]},
			[]string{w.Token, lease, fence, "w2", fence, ""})
	})

	t.Run("acked", func(t *testing.T) {
		// No replica: WAIT counts none, and the attempt gives the lock back;
		// what was sent is what is checked here.
		a := New(c).WithReplicaAcks(1, 5*time.Millisecond)
		for _, withRecord := range []bool{false, true} {
			l := store.Lease{Key: "reqlock:{args-acked}", Token: "t1", TTL: ttl}
			_, _, err := a.acquire(ctx, l, withRecord, "")
			if err == nil {
				t.Fatal("acquire without a replica counted")
			}
			keys, argv := calls.last(t)
			if withRecord {
				equalStrings(t, "keys", keys, keysOf(l.Key, l.Token, l.Key+recordSuffix))
				equalStrings(t, "argv", argv, []string{l.Token, lease, fence})
			} else {
				equalStrings(t, "keys", keys, keysOf(l.Key, l.Token))
				equalStrings(t, "argv", argv, []string{l.Token, lease, fence})
			}
		}
	})
}

// clockArg checks that arg is a clock in µs as the store reckons the
// server's: here, on one machine, within a few seconds of ours. "" is no
// clock: the script reads the server's.
func clockArg(t *testing.T, arg string) int64 {
	t.Helper()
	if arg == "" {
		return 0
	}
	v, err := strconv.ParseInt(arg, 10, 64)
	if d := time.Duration(v-time.Now().UnixMicro()) * time.Microsecond; err != nil || d < -5*time.Second || d > 5*time.Second {
		t.Errorf("clock %q, want the server's in microseconds", arg)
	}
	return v
}
