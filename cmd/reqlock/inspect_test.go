package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/redisstore"
)

type userKey struct{}

// A route keyed with Join (the user and the Idempotency-Key) holds a lock
// that the command finds from the parts, as a person reads them off the
// request: -part user-42 -part pay-1, in the route's scope.
func TestInspectJoinedKey(t *testing.T) {
	srv := redistest.Start(t)
	locker := core.NewLocker(redisstore.New(srv.Client(t)), core.WithHolder("web-1"), core.WithLogger(quiet))
	lock := httplock.New(httplock.Config{
		Locker: locker,
		Key:    httplock.Join(httplock.FromContext(userKey{}), httplock.IdempotencyKey()),
	})
	held, release := make(chan struct{}), make(chan struct{})
	mux := http.NewServeMux()
	mux.Handle("POST /payments", lock(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		close(held)
		<-release
	})))
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mux.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), userKey{}, "user-42")))
	}))
	defer web.Close()
	defer web.Client().CloseIdleConnections()
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	defer free() // before web.Close, which waits for the handler
	done := make(chan error, 1)
	go func() {
		req, _ := http.NewRequest("POST", web.URL+"/payments", nil)
		req.Header.Set(httplock.HeaderIdempotencyKey, "pay-1")
		res, err := web.Client().Do(req)
		if err == nil {
			res.Body.Close()
		}
		done <- err
	}()
	<-held
	url := "redis://" + srv.Addr

	r := runCmd(url, "inspect", "-scope", "POST /payments", "-part", "user-42", "-part", "pay-1")
	f := fields(t, r.stdout)
	skey, _ := locker.StoreKey(httplock.LockKey("POST /payments", "7:user-425:pay-1"))
	if r.code != 0 || f["state"] != "held" || f["holder"] != "web-1" || f["key"] != skey {
		t.Fatalf("joined key: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// The same key spelled out as the usage says it is encoded.
	r2 := runCmd(url, "inspect", "-scope", "POST /payments", "7:user-425:pay-1")
	if f2 := fields(t, r2.stdout); f2["key"] != f["key"] || f2["state"] != "held" || f2["fence"] != f["fence"] {
		t.Fatalf("the encoded key reads\n%s\nthe parts read\n%s", r2.stdout, r.stdout)
	}
	// The parts in another order, or one of them alone, are other keys.
	for _, args := range [][]string{
		{"-part", "pay-1", "-part", "user-42"},
		{"-part", "user-42"},
		{"user-42"},
	} {
		r := runCmd(url, append([]string{"inspect", "-scope", "POST /payments"}, args...)...)
		if f := fields(t, r.stdout); r.code != 0 || f["state"] != "free" {
			t.Errorf("%q: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
	free()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestInspectPartUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"inspect", "-part", "a", "KEY"}, "not both"},
		{[]string{"inspect", "-part", "a", "-part", ""}, "a -part is empty"},
	} {
		r := runCmd("redis://127.0.0.1:1", c.args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", c.args, r.code, r.stderr, exitUsage, c.want)
		}
	}
	r := runCmd("", "inspect", "-h")
	if r.code != exitOK || !strings.Contains(r.stderr, `-part user-42 -part pay-1`) || !strings.Contains(r.stderr, `"7:user-425:pay-1"`) {
		t.Errorf("inspect -h does not explain the parts:\n%s", r.stderr)
	}
}
