package etcdstore_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/etcdstore"
	"github.com/reqlock/reqlock/internal/safety"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// guardedWorker takes the lock, reads the balance, pauses, and writes the
// balance back plus one in a transaction that holds only under the lock
// (Guard) and only if the balance is still what it read. It records its
// steps in a safety.History and its writes in a ledger.
type guardedWorker struct {
	name   string
	cli    *clientv3.Client
	store  *etcdstore.Store
	locker *core.Locker
	h      *safety.History
	ledger *ledger
	pause  time.Duration // the most a hold pauses between read and write
	// callTimeout bounds the read and the guarded write.
	callTimeout time.Duration
}

const (
	safetyKey  = "account"
	balanceKey = "balance"
	workerTTL  = 2 * time.Second
)

func newGuardedWorker(name string, cli *clientv3.Client, h *safety.History, lg *ledger, pause time.Duration) *guardedWorker {
	s := etcdstore.New(cli)
	return &guardedWorker{name: name, cli: cli, store: s, h: h, ledger: lg, pause: pause, callTimeout: time.Second,
		locker: core.NewLocker(s, core.WithTTL(workerTTL), core.WithLogger(quietLog()))}
}

// cycle is one acquire, read, pause, guarded write, release.
func (w *guardedWorker) cycle(ctx context.Context) {
	h := w.h
	h.Add(safety.Event{Worker: w.name, Kind: safety.Acquire, Type: safety.Invoke, Lease: int64(workerTTL)})
	octx, cancel := context.WithTimeout(ctx, 2*time.Second)
	lk, err := w.locker.Obtain(octx, safetyKey)
	cancel()
	if err != nil {
		typ := safety.Fail
		if errors.Is(err, core.ErrUnavailable) {
			typ = safety.Unknown
		}
		h.Add(safety.Event{Worker: w.name, Kind: safety.Acquire, Type: typ, Err: err.Error()})
		time.Sleep(20 * time.Millisecond)
		return
	}
	fence := lk.Fence()
	h.Add(safety.Event{Worker: w.name, Kind: safety.Acquire, Type: safety.OK, Fence: fence})
	done := make(chan struct{})
	var watch sync.WaitGroup
	watch.Go(func() {
		select {
		case <-lk.Lost():
			h.Add(safety.Event{Worker: w.name, Kind: safety.LostSig, Type: safety.OK, Fence: fence})
		case <-done:
		}
	})

	rctx, rcancel := context.WithTimeout(ctx, w.callTimeout)
	r, err := w.cli.Get(rctx, balanceKey)
	rcancel()
	if err == nil {
		base, modRev := int64(0), int64(0)
		if len(r.Kvs) > 0 {
			base, _ = strconv.ParseInt(strings.SplitN(string(r.Kvs[0].Value), "/", 2)[0], 10, 64)
			modRev = r.Kvs[0].ModRevision
		}
		if w.pause > 0 {
			time.Sleep(rand.N(w.pause))
		}
		h.Add(safety.Event{Worker: w.name, Kind: safety.Write, Type: safety.Invoke, Fence: fence})
		wctx, wcancel := context.WithTimeout(ctx, w.callTimeout)
		tr, err := w.cli.Txn(wctx).
			If(w.store.Guard(lk), clientv3.Compare(clientv3.ModRevision(balanceKey), "=", modRev)).
			Then(clientv3.OpPut(balanceKey, fmt.Sprintf("%d/%d", base+1, fence))).
			Commit()
		wcancel()
		switch {
		case err != nil:
			h.Add(safety.Event{Worker: w.name, Kind: safety.Write, Type: safety.Unknown, Fence: fence, Err: err.Error()})
		case tr.Succeeded:
			h.Add(safety.Event{Worker: w.name, Kind: safety.Write, Type: safety.OK, Fence: fence})
			w.ledger.add(safety.Access{T: tr.Header.Revision, Worker: w.name, Write: true, Fence: fence, Base: base, Value: base + 1, Accepted: true})
		default:
			h.Add(safety.Event{Worker: w.name, Kind: safety.Write, Type: safety.Fail, Fence: fence})
		}
	}
	close(done)
	watch.Wait()
	h.Add(safety.Event{Worker: w.name, Kind: safety.Release, Type: safety.Invoke, Fence: fence})
	relCtx, relCancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	_ = lk.Release(relCtx)
	relCancel()
}

// ledger is every write etcd accepted, by commit revision.
type ledger struct {
	mu  sync.Mutex
	log []safety.Access
}

func (l *ledger) add(a safety.Access) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.log = append(l.log, a)
}

// sorted returns the writes in the order etcd committed them.
func (l *ledger) sorted() []safety.Access {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := append([]safety.Access(nil), l.log...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].T < out[j-1].T; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// workerEnv makes the test binary a holder process: its value is the
// endpoints. The process runs guarded cycles, writing its history to
// stdout as JSON lines and its accepted writes as "W <json>" lines, until
// its stdin closes.
const workerEnv = "ETCDSTORE_SAFETY_WORKER"

func runWorkerProcess(endpoints string) int {
	cli, err := clientv3.New(clientv3.Config{Endpoints: strings.Split(endpoints, ","), DialTimeout: time.Second, Logger: zap.NewNop()})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer cli.Close()
	var out sync.Mutex
	h := safety.NewHistory(lockedWriter{&out, os.Stdout})
	lg := &ledger{}
	w := newGuardedWorker("proc", cli, h, lg, 300*time.Millisecond)
	// Continued after a stop of twice its lease, the process's connections
	// may take a moment to come back (under -race, more than a second): its
	// read and its guarded write must still reach etcd, to be refused.
	w.callTimeout = 10 * time.Second
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		b := make([]byte, 1)
		_, _ = os.Stdin.Read(b)
		cancel()
	}()
	for ctx.Err() == nil {
		n := len(lg.sorted())
		w.cycle(ctx)
		for _, a := range lg.sorted()[n:] {
			out.Lock()
			fmt.Fprintf(os.Stdout, "W %d %d %d %d\n", a.T, a.Fence, a.Base, a.Value)
			out.Unlock()
		}
	}
	return 0
}

type lockedWriter struct {
	mu *sync.Mutex
	f  *os.File
}

func (w lockedWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.f.Write(b)
}
