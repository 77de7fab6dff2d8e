package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/internal/pgtest"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/redisstore"
	"github.com/reqlock/reqlock/redisstore/redlock"
)

// TestMain stops the shared PostgreSQL of the Postgres tests, then checks
// for leaked goroutines.
func TestMain(m *testing.M) { pgtest.Main(m) }

type result struct {
	code           int
	stdout, stderr string
}

// runCmd runs the command with REDIS_URL set to redisURL, and nothing else.
func runCmd(redisURL string, args ...string) result {
	return runEnv(map[string]string{envRedis: redisURL}, args...)
}

// runEnv runs the command in the environment env.
func runEnv(env map[string]string, args ...string) result {
	var out, errs bytes.Buffer
	code := run(args, func(name string) string { return env[name] }, &out, &errs)
	return result{code, out.String(), errs.String()}
}

// fields reads the text form: "name  value" a line.
func fields(t *testing.T, out string) map[string]string {
	t.Helper()
	m := make(map[string]string)
	for line := range strings.Lines(out) {
		name, value, ok := strings.Cut(strings.TrimSpace(line), " ")
		if !ok {
			t.Fatalf("line %q is not name and value", line)
		}
		m[name] = strings.TrimSpace(value)
	}
	for _, name := range []string{"state", "holder", "lease", "fence", "waiting", "key"} {
		if _, ok := m[name]; !ok {
			t.Fatalf("no %s in\n%s", name, out)
		}
	}
	return m
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func TestInspectCommand(t *testing.T) {
	srv := redistest.Start(t)
	url := "redis://" + srv.Addr
	store := redisstore.New(srv.Client(t))
	ctx := ctxT(t)
	const ttl = 10 * time.Second
	web1 := core.NewLocker(store, core.WithHolder("web-1"), core.WithTTL(ttl), core.WithLogger(quiet))
	web2 := core.NewLocker(store, core.WithHolder("web-2"), core.WithTTL(ttl), core.WithLogger(quiet))

	// Free: never used.
	r := runCmd(url, "inspect", "order:1")
	if r.code != 0 {
		t.Fatalf("free key: exit %d, %s", r.code, r.stderr)
	}
	skey, _ := web1.StoreKey("order:1")
	f := fields(t, r.stdout)
	if f["state"] != "free" || f["holder"] != "-" || f["lease"] != "0s" || f["fence"] != "0" || f["key"] != skey {
		t.Fatalf("free key:\n%s", r.stdout)
	}

	// Held, with a waiter in line.
	lk, err := web1.TryObtain(ctx, "order:1")
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan *core.Lock, 1)
	go func() {
		blk, err := web2.Obtain(ctx, "order:1")
		if err != nil {
			t.Error(err)
		}
		got <- blk
	}()
	deadline := time.Now().Add(5 * time.Second)
	for {
		r = runCmd(url, "inspect", "order:1")
		if f = fields(t, r.stdout); f["waiting"] == "1" || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	lease, err := time.ParseDuration(f["lease"])
	if r.code != 0 || f["state"] != "held" || f["holder"] != "web-1" || f["waiting"] != "1" ||
		f["fence"] != fmt.Sprint(lk.Fence()) || err != nil || lease <= 0 || lease > ttl {
		t.Fatalf("held key, one waiter: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(r.stdout, strings.TrimSuffix(lk.Token(), ".web-1")) {
		t.Fatalf("the output shows the holder's token:\n%s", r.stdout)
	}

	// JSON, flags after the key.
	r = runCmd(url, "inspect", "order:1", "-json")
	var j core.Holding
	if err := json.Unmarshal([]byte(r.stdout), &j); err != nil || r.code != 0 {
		t.Fatalf("-json: exit %d, %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	if !j.Held || j.Holder != "web-1" || j.Fence != lk.Fence() || j.Waiting != 1 || j.StoreKey != skey ||
		j.Lease <= 0 || j.Lease > ttl {
		t.Fatalf("-json: %+v", j)
	}

	// Released: the waiter holds it; then free, the fence kept.
	if err := lk.Release(ctx); err != nil {
		t.Fatal(err)
	}
	blk := <-got
	if blk == nil {
		t.FailNow()
	}
	if f = fields(t, runCmd(url, "inspect", "order:1").stdout); f["holder"] != "web-2" || f["waiting"] != "0" {
		t.Fatalf("after the hand-over: %v", f)
	}
	_ = blk.Release(ctx)
	if f = fields(t, runCmd(url, "inspect", "order:1").stdout); f["state"] != "free" || f["fence"] != fmt.Sprint(blk.Fence()) {
		t.Fatalf("after release: %v, want free with fence %d", f, blk.Fence())
	}
}

// -scope finds the lock of an HTTP request, and -prefix a Locker's
// namespace.
func TestInspectCommandScopeAndPrefix(t *testing.T) {
	srv := redistest.Start(t)
	ctx := ctxT(t)
	l := core.NewLocker(redisstore.New(srv.Client(t)), core.WithPrefix("shop:"), core.WithHolder("api-3"), core.WithLogger(quiet))
	lk, err := l.TryObtain(ctx, httplock.LockKey("POST /orders/{id}", "user-7"))
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Release(ctx)
	url := "redis://" + srv.Addr
	r := runCmd(url, "inspect", "-prefix", "shop:", "-scope", "POST /orders/{id}", "user-7")
	if f := fields(t, r.stdout); r.code != 0 || f["state"] != "held" || f["holder"] != "api-3" || !strings.HasPrefix(f["key"], "shop:{") {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// The same raw key without the scope, or another prefix, is another lock.
	for _, args := range [][]string{{"-prefix", "shop:", "user-7"}, {"-scope", "POST /orders/{id}", "user-7"}} {
		r = runCmd(url, append([]string{"inspect"}, args...)...)
		if f := fields(t, r.stdout); r.code != 0 || f["state"] != "free" {
			t.Fatalf("%v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
}

// Comma-separated URLs are Redlock nodes.
func TestInspectCommandRedlock(t *testing.T) {
	servers := redistest.StartN(t, 3)
	var urls []string
	for _, s := range servers {
		urls = append(urls, "redis://"+s.Addr)
	}
	ctx := ctxT(t)
	rl := redlock.New(servers[0].Client(t), servers[1].Client(t), servers[2].Client(t)).WithNodeTimeout(time.Second)
	l := core.NewLocker(rl, core.WithHolder("worker-9"), core.WithLogger(quiet))
	lk, err := l.TryObtain(ctx, "job:1")
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Release(ctx)
	r := runCmd(strings.Join(urls, ", "), "inspect", "job:1")
	if f := fields(t, r.stdout); r.code != 0 || f["state"] != "held" || f["holder"] != "worker-9" || f["fence"] != fmt.Sprint(lk.Fence()) {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// One node down still leaves a quorum to answer.
	servers[2].Kill()
	r = runCmd(strings.Join(urls, ","), "inspect", "job:1")
	if f := fields(t, r.stdout); r.code != 0 || f["state"] != "held" {
		t.Fatalf("one node down: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// Redis down: exit 1 and a message that says so, with the address and the
// store key.
func TestInspectCommandRedisDown(t *testing.T) {
	srv := redistest.Start(t)
	url := "redis://" + srv.Addr
	srv.Kill()
	start := time.Now()
	r := runCmd(url, "inspect", "-timeout", "3s", "order:1")
	if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, srv.Addr) ||
		!strings.Contains(r.stderr, "store unavailable") || !strings.Contains(r.stderr, "reqlock:{") {
		t.Fatalf("exit %d after %v\nstdout: %q\nstderr: %s", r.code, time.Since(start), r.stdout, r.stderr)
	}
}

// Hostile keys are hashed like any other or refused with a usage error;
// bad arguments and environments are usage errors; nothing panics.
func TestInspectCommandArguments(t *testing.T) {
	srv := redistest.Start(t)
	url := "redis://" + srv.Addr
	for _, key := range []string{strings.Repeat("x", 1<<20), "\xff\xfe\x00binary\n", "{tag}*?", "-looks-like-a-flag"} {
		r := runCmd(url, "inspect", "--", key)
		if f := fields(t, r.stdout); r.code != 0 || f["state"] != "free" || strings.Contains(r.stdout, key) {
			t.Fatalf("key %.20q: exit %d\n%.200s%s", key, r.code, r.stdout, r.stderr)
		}
	}
	usage := []struct {
		name, url string
		args      []string
		says      string
	}{
		{"no command", url, nil, "usage"},
		{"unknown command", url, []string{"peek", "k"}, "unknown command"},
		{"no key", url, []string{"inspect"}, "want one KEY"},
		{"two keys", url, []string{"inspect", "a", "b"}, "want one KEY"},
		{"empty key", url, []string{"inspect", ""}, "KEY is empty"},
		{"empty key with scope", url, []string{"inspect", "-scope", "GET /x", ""}, "KEY is empty"},
		{"bad flag", url, []string{"inspect", "-nope", "k"}, "-nope"},
		{"braces in prefix", url, []string{"inspect", "-prefix", "a{b}", "k"}, "must not contain"},
		{"zero timeout", url, []string{"inspect", "-timeout", "0s", "k"}, "-timeout"},
		{"no REDIS_URL", "", []string{"inspect", "k"}, "REDIS_URL are not set"},
		{"bad REDIS_URL", "http://x", []string{"inspect", "k"}, "REDIS_URL"},
		{"node twice", url + "," + url, []string{"inspect", "k"}, "twice"},
	}
	for _, u := range usage {
		r := runCmd(u.url, u.args...)
		if r.code != 2 || !strings.Contains(r.stderr, u.says) {
			t.Errorf("%s: exit %d, stderr %q; want 2 and %q", u.name, r.code, r.stderr, u.says)
		}
	}
	if r := runCmd(url, "inspect", "-h"); r.code != 0 {
		t.Errorf("-h: exit %d", r.code)
	}
}

// -cluster reads REDIS_URL as a Cluster's (more nodes as ?addr=).
func TestInspectCommandCluster(t *testing.T) {
	cl := redistest.StartCluster(t, 3)
	ctx := ctxT(t)
	l := core.NewLocker(redisstore.New(cl.Client(t)), core.WithHolder("eu-2"), core.WithLogger(quiet))
	lk, err := l.TryObtain(ctx, "cart:5")
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Release(ctx)
	url := "redis://" + cl.Servers[0].Addr + "?addr=" + cl.Servers[1].Addr + "&addr=" + cl.Servers[2].Addr
	r := runCmd(url, "inspect", "-cluster", "cart:5")
	if f := fields(t, r.stdout); r.code != 0 || f["state"] != "held" || f["holder"] != "eu-2" || f["fence"] != fmt.Sprint(lk.Fence()) {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
