package safety

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/redisstore"
	"github.com/reqlock/reqlock/redisstore/redlock"
)

// workerEnv carries a worker process's configuration, as JSON.
const workerEnv = "REQLOCK_SAFETY_WORKER"

// workerConfig is what a worker process runs.
type workerConfig struct {
	Name    string        `json:"name"`
	Key     string        `json:"key"`
	Account string        `json:"account"` // the account's URL
	Redis   []string      `json:"redis"`   // one address: redisstore.Store; more: redlock.Store
	TTL     time.Duration `json:"ttl"`
	Pause   time.Duration `json:"pause"` // the longest pause between read and write
	Ops     int           `json:"ops"`
	For     time.Duration `json:"for"`
}

// workerMain runs a worker process: the workload, with every event written
// to stdout as a JSON line for the parent's history. It returns the exit
// code.
func workerMain(cfg string) int {
	var c workerConfig
	if err := json.Unmarshal([]byte(cfg), &c); err != nil {
		fmt.Fprintf(os.Stderr, "safety worker: bad config: %v\n", err)
		return 2
	}
	var clients []redis.UniversalClient
	for _, addr := range c.Redis {
		rc := redis.NewClient(redistest.ClientOptions(addr))
		defer rc.Close()
		clients = append(clients, rc)
	}
	var store core.Store
	if len(clients) == 1 {
		store = redisstore.New(clients[0])
	} else {
		store = redlock.New(clients...)
	}
	acct := NewAccountClient(c.Account)
	defer acct.Close()
	w := &Worker{
		Name:    c.Name,
		Locker:  locker(store, c.TTL),
		Key:     c.Key,
		Account: acct,
		History: NewHistory(os.Stdout),
		Pause:   RandomPause(max(c.Pause, time.Microsecond)),
	}
	w.Run(context.Background(), c.Ops, time.Now().Add(c.For))
	return 0
}
