package etcdtest

import (
	"context"
	"testing"
	"time"
)

func TestStartOneMember(t *testing.T) {
	c := Start(t)
	cli := c.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := cli.Put(ctx, "k", "v"); err != nil {
		t.Fatal(err)
	}
	r, err := cli.Get(ctx, "k")
	if err != nil || len(r.Kvs) != 1 || string(r.Kvs[0].Value) != "v" {
		t.Fatalf("get: %v %v", r, err)
	}
}

func TestClusterSurvivesLeaderKill(t *testing.T) {
	c := StartCluster(t, 3, WithProxy())
	cli := c.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := cli.Put(ctx, "k", "1"); err != nil {
		t.Fatal(err)
	}
	old := c.Leader(t)
	old.Kill()
	// A proposal in flight at the change fails (etcdserver: request timed
	// out) and is not retried by the client: try until one goes through.
	for {
		_, err := cli.Put(ctx, "k", "2")
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("put after the leader was killed: %v", err)
		}
	}
	if l := c.Leader(t); l == old {
		t.Fatalf("killed member %s still leads", l.Name)
	}
	old.Restart(t)
	r, err := cli.Get(ctx, "k")
	if err != nil || string(r.Kvs[0].Value) != "2" {
		t.Fatalf("get: %v %v", r, err)
	}
}

func TestPartitionedMemberLosesQuorumReads(t *testing.T) {
	c := StartCluster(t, 3, WithProxy())
	m := c.Members[0]
	m.Partition()
	cli := NewClient(t, m.Endpoint())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := cli.Get(ctx, "k"); err == nil {
		t.Fatal("a read through a partitioned member's proxy succeeded")
	}
	m.Heal()
	ctx2, cancel2 := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel2()
	if _, err := cli.Get(ctx2, "k"); err != nil {
		t.Fatalf("read after heal: %v", err)
	}
}
