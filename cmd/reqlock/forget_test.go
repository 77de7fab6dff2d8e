package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/redisstore"
)

// inDoubt leaves key's last run in doubt on s, as a run that lost its lock
// without a record would (marked, then released without one), and checks
// that RefuseInDoubt refuses the key.
func inDoubt(t *testing.T, s core.Store, key string) *core.Locker {
	t.Helper()
	ctx := ctxT(t)
	l := core.NewLocker(s, core.WithLogger(quiet), core.WithDoubtPolicy(core.RefuseInDoubt))
	lk, err := l.TryObtain(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lk.MarkRun(ctx, time.Hour, core.RunAgain); err != nil {
		t.Fatal(err)
	}
	if err := lk.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Once(ctx, key, time.Hour, payOnce); !errors.Is(err, core.ErrInDoubt) {
		t.Fatalf("Once after a run in doubt: %v, want ErrInDoubt", err)
	}
	return l
}

func payOnce(context.Context) ([]byte, error) { return []byte("paid"), nil }

// expectForgotten checks that forget said so and that the key runs again.
func expectForgotten(t *testing.T, name string, r result, l *core.Locker, key string) {
	t.Helper()
	if r.code != exitOK || !strings.HasPrefix(r.stdout, "cleared ") || r.stderr != "" {
		t.Fatalf("%s: forget: exit %d\n%s%s", name, r.code, r.stdout, r.stderr)
	}
	out, err := l.Once(ctxT(t), key, time.Hour, payOnce)
	if err != nil || out.Replayed || string(out.Value) != "paid" {
		t.Fatalf("%s: Once after forget: %+v, %v; want a run", name, out, err)
	}
}

// On Redis, PostgreSQL and etcd, forget clears a key's mark of a run in
// doubt, and the key runs again; it is a no-op on a key without one.
func TestForgetCommandEveryStore(t *testing.T) {
	for _, s := range everyStore(t) {
		l := inDoubt(t, s.store, "job:pay-1")
		expectForgotten(t, s.name, runEnv(s.env, "forget", "job:pay-1"), l, "job:pay-1")
		if r := runEnv(s.env, "forget", "job:never"); r.code != exitOK {
			t.Fatalf("%s: forget of a key without a mark: exit %d %s", s.name, r.code, r.stderr)
		}
	}
}

// An HTTP key is named as inspect names it: its scope and its parts.
func TestForgetCommandHTTPKey(t *testing.T) {
	srv := redistest.Start(t)
	key := httplock.LockKey("POST /payments", httplock.JoinKeys("user-42", "pay-1"))
	l := inDoubt(t, redisstore.New(srv.Client(t)), key)
	r := runCmd("redis://"+srv.Addr, "forget", "-scope", "POST /payments", "-part", "user-42", "-part", "pay-1")
	expectForgotten(t, "Redis", r, l, key)
}

// Sentinels and a Cluster are named as for inspect.
func TestForgetCommandSentinelAndCluster(t *testing.T) {
	sn := redistest.StartSentinel(t)
	l := inDoubt(t, redisstore.New(sn.Client(t)), "job:pay-2")
	url := "redis://" + sn.Sentinels[0].Addr + "?master_name=" + redistest.MasterName
	expectForgotten(t, "Sentinel", runCmd(url, "forget", "job:pay-2"), l, "job:pay-2")

	cl := redistest.StartCluster(t, 3)
	l = inDoubt(t, redisstore.New(cl.Client(t)), "job:pay-3")
	url = "redis://" + cl.Servers[0].Addr + "?addr=" + cl.Servers[1].Addr + "&addr=" + cl.Servers[2].Addr
	expectForgotten(t, "Cluster", runCmd(url, "forget", "-cluster", "job:pay-3"), l, "job:pay-3")
}

// Redlock keeps no records, so no run on it is ever in doubt: forget says
// so, a usage error; a store that does not answer is exit 1; the usage
// errors are inspect's.
func TestForgetCommandRefusals(t *testing.T) {
	servers := redistest.StartN(t, 3)
	urls := "redis://" + servers[0].Addr + ",redis://" + servers[1].Addr + ",redis://" + servers[2].Addr
	if r := runCmd(urls, "forget", "job:1"); r.code != exitUsage || !strings.Contains(r.stderr, "keeps no records") {
		t.Fatalf("Redlock: exit %d, stderr %q; want 2 and keeps no records", r.code, r.stderr)
	}
	down := redistest.Start(t)
	url := "redis://" + down.Addr
	down.Kill()
	if r := runCmd(url, "forget", "-timeout", "2s", "job:1"); r.code != exitStore || !strings.Contains(r.stderr, down.Addr) {
		t.Fatalf("Redis down: exit %d, stderr %q; want 1 and the address", r.code, r.stderr)
	}
	for _, args := range [][]string{{"forget"}, {"forget", ""}, {"forget", "a", "b"}, {"forget", "-part", "", "x"}, {"forget", "-json", "k"}} {
		if r := runCmd(url, args...); r.code != exitUsage {
			t.Errorf("%q: exit %d, want 2", args, r.code)
		}
	}
	r := runCmd(url, "forget", "-h")
	if r.code != exitOK || !strings.Contains(r.stderr, "in_doubt") || !strings.Contains(r.stderr, "-part") || !strings.Contains(r.stderr, "DATABASE_URL") {
		t.Errorf("forget -h: exit %d\n%s", r.code, r.stderr)
	}
	if r := runCmd(url, "-h"); !strings.Contains(r.stdout, "reqlock forget") {
		t.Errorf("-h does not name forget:\n%s", r.stdout)
	}
}
