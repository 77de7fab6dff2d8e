package etcdsnippets_test

import (
	"context"
	"log"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/examples/etcdsnippets"
)

// A job that runs under a lock on etcd. Not run here (it needs the cluster
// the addresses name); etcdstore's own Example runs on a real member.
func ExampleOpen() {
	err := etcdsnippets.Open(func(locker *core.Locker) {
		err := locker.Do(context.Background(), "job-7", func(ctx context.Context) error {
			return nil // the work, with ctx cancelled if the lock is lost
		})
		if err != nil {
			log.Print(err)
		}
	})
	if err != nil {
		log.Print(err)
	}
}
