package etcdtest_test

import (
	"context"
	"testing"

	"github.com/reqlock/reqlock/internal/etcdtest"
)

// A test starts one member and talks to it; the member is stopped and its
// data removed when the test ends. Three members on loopback, behind
// proxies, are etcdtest.StartCluster(t, 3, etcdtest.WithProxy()).
func Example() {
	testPut := func(t *testing.T) {
		cli := etcdtest.Start(t).Client(t)
		if _, err := cli.Put(context.Background(), "k", "v"); err != nil {
			t.Fatal(err)
		}
	}
	_ = testPut
}
