package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/etcdstore"
	"github.com/reqlock/reqlock/internal/etcdtest"
	"github.com/reqlock/reqlock/internal/pgtest"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/pgstore"
	"github.com/reqlock/reqlock/redisstore"
)

// storeUnderTest is a real server, a store on it, and the environment that
// points the command at it.
type storeUnderTest struct {
	name  string
	store core.Store
	env   map[string]string
}

func everyStore(t *testing.T) []storeUnderTest {
	redisSrv := redistest.Start(t)
	pg := pgtest.Shared(t)
	conn := pg.NewDatabase(t)
	ps := pgstore.New(pgtest.OpenPool(t, conn))
	if err := ps.Migrate(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	etcd := etcdtest.Start(t)
	return []storeUnderTest{
		{"Redis", redisstore.New(redisSrv.Client(t)), map[string]string{envRedis: "redis://" + redisSrv.Addr}},
		{"PostgreSQL", ps, map[string]string{envPostgres: conn}},
		{"etcd", etcdstore.New(etcd.Client(t)), map[string]string{envEtcd: strings.Join(etcd.Endpoints(), ",")}},
	}
}

// A held key with one waiter in line reads the same on every store: the
// same lines in the same order, the same JSON names, and the same values
// but for the lease, which only runs down from the TTL.
func TestInspectEveryStoreSameShape(t *testing.T) {
	const ttl = 10 * time.Second
	var textNames, jsonNames []string
	for _, s := range everyStore(t) {
		ctx := ctxT(t)
		web1 := core.NewLocker(s.store, core.WithHolder("web-1"), core.WithTTL(ttl), core.WithLogger(quiet))
		web2 := core.NewLocker(s.store, core.WithHolder("web-2"), core.WithTTL(ttl), core.WithLogger(quiet))
		lk, err := web1.TryObtain(ctx, "order:1")
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		waited := make(chan error, 1)
		go func() {
			blk, err := web2.Obtain(ctx, "order:1")
			if err == nil {
				err = blk.Release(ctx)
			}
			waited <- err
		}()
		var r result
		var f map[string]string
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			r = runEnv(s.env, "inspect", "order:1")
			if f = fields(t, r.stdout); f["waiting"] == "1" || time.Now().After(deadline) {
				break
			}
		}
		skey, _ := web1.StoreKey("order:1")
		lease, err := time.ParseDuration(f["lease"])
		if r.code != 0 || f["state"] != "held" || f["holder"] != "web-1" || f["waiting"] != "1" ||
			f["fence"] != fmt.Sprint(lk.Fence()) || f["key"] != skey || err != nil || lease <= 0 || lease > ttl {
			t.Errorf("%s: exit %d\n%s%s", s.name, r.code, r.stdout, r.stderr)
		}
		names := lineNames(r.stdout)
		if textNames == nil {
			textNames = names
		} else if !slices.Equal(names, textNames) {
			t.Errorf("%s prints the lines %q; Redis prints %q", s.name, names, textNames)
		}

		rj := runEnv(s.env, "inspect", "-json", "order:1")
		var obj map[string]any
		if err := json.Unmarshal([]byte(rj.stdout), &obj); err != nil || rj.code != 0 {
			t.Fatalf("%s -json: exit %d, %v\n%s%s", s.name, rj.code, err, rj.stdout, rj.stderr)
		}
		keys := slices.Sorted(func(yield func(string) bool) {
			for k := range obj {
				if !yield(k) {
					return
				}
			}
		})
		if jsonNames == nil {
			jsonNames = keys
		} else if !slices.Equal(keys, jsonNames) {
			t.Errorf("%s's JSON has %q; Redis's has %q", s.name, keys, jsonNames)
		}
		if obj["held"] != true || obj["holder"] != "web-1" || obj["store_key"] != skey || obj["lease_ms"].(float64) <= 0 {
			t.Errorf("%s -json: %s", s.name, rj.stdout)
		}

		if err := lk.Release(ctx); err != nil {
			t.Fatal(err)
		}
		if err := <-waited; err != nil {
			t.Fatalf("%s: the waiter: %v", s.name, err)
		}
	}
}

// lineNames is the first word of each line of the text form.
func lineNames(out string) []string {
	var names []string
	for line := range strings.Lines(out) {
		name, _, _ := strings.Cut(line, " ")
		names = append(names, name)
	}
	return names
}

// REDIS_URL with ?master_name= names Sentinels: the command reads the
// master they name.
func TestInspectCommandSentinel(t *testing.T) {
	sn := redistest.StartSentinel(t)
	ctx := ctxT(t)
	l := core.NewLocker(redisstore.New(sn.Client(t)), core.WithHolder("eu-1"), core.WithLogger(quiet))
	lk, err := l.TryObtain(ctx, "cart:9")
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Release(ctx)
	url := "redis://" + sn.Sentinels[0].Addr + "?master_name=" + redistest.MasterName +
		"&addr=" + sn.Sentinels[1].Addr + "&addr=" + sn.Sentinels[2].Addr
	r := runCmd(url, "inspect", "cart:9")
	if f := fields(t, r.stdout); r.code != 0 || f["state"] != "held" || f["holder"] != "eu-1" || f["fence"] != fmt.Sprint(lk.Fence()) {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// The first variable set names the store, as in examples/demo; a store the
// command cannot reach is exit 1 and a message naming it and its address.
func TestInspectCommandPicksByEnvironment(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		says string
	}{
		{map[string]string{envPostgres: "postgres://u@127.0.0.1:1/db", envEtcd: "127.0.0.1:2", envRedis: "redis://127.0.0.1:3"}, "PostgreSQL at 127.0.0.1:1"},
		{map[string]string{envEtcd: "127.0.0.1:2", envRedis: "redis://127.0.0.1:3"}, "etcd at 127.0.0.1:2"},
		{map[string]string{envRedis: "redis://127.0.0.1:3"}, "Redis at 127.0.0.1:3"},
	} {
		r := runEnv(c.env, "inspect", "-timeout", "1s", "k")
		if r.code != exitStore || !strings.Contains(r.stderr, c.says) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.env, r.code, r.stderr, exitStore, c.says)
		}
	}
	for _, c := range []struct {
		env  map[string]string
		args []string
		says string
	}{
		{map[string]string{envPostgres: "postgres://u:s3cret@127.0.0.1:x/db"}, nil, "DATABASE_URL"},
		{map[string]string{envEtcd: "127.0.0.1:2,,"}, nil, "empty endpoint"},
		{map[string]string{envEtcd: "127.0.0.1:2"}, []string{"-cluster"}, "-cluster is for REDIS_URL"},
	} {
		r := runEnv(c.env, append(append([]string{"inspect"}, c.args...), "k")...)
		if r.code != exitUsage || !strings.Contains(r.stderr, c.says) || strings.Contains(r.stderr, "s3cret") {
			t.Errorf("%v %q: exit %d, stderr %q; want %d and %q", c.env, c.args, r.code, r.stderr, exitUsage, c.says)
		}
	}
	// -h names every variable.
	r := runEnv(nil, "inspect", "-h")
	for _, v := range []string{envPostgres, envEtcd, envRedis, "master_name"} {
		if !strings.Contains(r.stderr, v) {
			t.Errorf("inspect -h does not name %s:\n%s", v, r.stderr)
		}
	}
}
