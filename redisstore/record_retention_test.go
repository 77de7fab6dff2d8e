package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/redisstore"
)

// A positive retention under a millisecond is rounded up to one: Redis
// refuses PX 0, and the release would fail and leave the lock held.
func TestSubMillisecondRetention(t *testing.T) {
	c := redistest.Start(t).Client(t)
	l := newLocker(redisstore.New(c), core.WithTTL(time.Second))
	ctx := ctxT(t, 10*time.Second)
	_, err := l.Once(ctx, "job", 500*time.Microsecond, func(context.Context) ([]byte, error) { return []byte("done"), nil })
	if err != nil {
		t.Errorf("Once with retention 500µs: %v", err)
	}
	if _, _, err := l.TryObtainOrRecord(ctx, "job"); err != nil {
		t.Errorf("the key after Once: %v (the lock was left held)", err)
	}
	time.Sleep(1200 * time.Millisecond) // let the background release retries end before the leak check
}
