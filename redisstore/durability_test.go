package redisstore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/redisstore"
)

func TestRecordsDurable(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		durable bool
		says    string
	}{
		{"none", nil, false, "every record is lost"},
		{"aof", []string{"--appendonly", "yes"}, true, "appendonly yes"},
		{"rdb", []string{"--save", "3600 1"}, true, "RDB snapshots only"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := redistest.Start(t, tc.args...)
			var d store.Durability = redisstore.New(srv.Client(t))
			durable, detail, err := d.RecordsDurable(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if durable != tc.durable || !strings.Contains(detail, tc.says) {
				t.Fatalf("RecordsDurable = %v, %q; want %v and %q", durable, detail, tc.durable, tc.says)
			}
		})
	}
}

// TestRecordsDurableRenamedConfig: a Redis whose CONFIG is renamed away (as
// managed services do) cannot tell; the error says what was asked.
func TestRecordsDurableRenamedConfig(t *testing.T) {
	srv := redistest.Start(t, "--rename-command", "CONFIG", "")
	_, _, err := redisstore.New(srv.Client(t)).RecordsDurable(context.Background())
	if err == nil || !strings.Contains(err.Error(), "CONFIG GET appendonly") {
		t.Fatalf("err = %v, want the CONFIG GET failure", err)
	}
}

// The Locker passes the question to its store (core's tests check that it
// says when the store cannot tell).
func TestLockerRecordsDurable(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t, "--appendonly", "yes")
	if durable, _, err := core.NewLocker(redisstore.New(srv.Client(t))).RecordsDurable(ctx); err != nil || !durable {
		t.Fatalf("Redis with AOF: %v, %v; want durable", durable, err)
	}
}
