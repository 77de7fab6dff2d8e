package perclient_test

import (
	"runtime"
	"testing"
	"time"
	"weak"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/reqlock/reqlock/redisstore/internal/perclient"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestOneValuePerClient(t *testing.T) {
	var m perclient.Map[int]
	a, b := redis.NewClient(&redis.Options{}), redis.NewClient(&redis.Options{})
	defer a.Close()
	defer b.Close()
	if v, loaded := m.LoadOrStore(a, 1); v != 1 || loaded {
		t.Fatalf("first: %d %v", v, loaded)
	}
	if v, loaded := m.LoadOrStore(a, 2); v != 1 || !loaded {
		t.Fatalf("again: %d %v, want the first value", v, loaded)
	}
	if v, loaded := m.LoadOrStore(b, 3); v != 3 || loaded {
		t.Fatalf("another client: %d %v", v, loaded)
	}
}

// A client the map has seen is collected once nobody else holds it.
func TestClientIsCollected(t *testing.T) {
	var m perclient.Map[int]
	c := redis.NewClient(&redis.Options{})
	m.LoadOrStore(c, 1)
	_ = c.Close()
	w := weak.Make(c)
	c = nil
	for deadline := time.Now().Add(5 * time.Second); w.Value() != nil; {
		if time.Now().After(deadline) {
			t.Fatal("the map keeps a client alive")
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
}
