package redisserver

import (
	"context"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestStartAndKill(t *testing.T) {
	s := Start(t)
	c := s.Client(t)
	if err := c.Ping(context.Background()).Err(); err != nil {
		t.Fatalf("ping a started server: %v", err)
	}
	s.Kill()
	if err := c.Ping(context.Background()).Err(); err == nil {
		t.Fatal("ping a killed server: no error")
	}
	s.Kill() // a second time is harmless
}
