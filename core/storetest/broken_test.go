package storetest_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/core/storetest"
	"github.com/reqlock/reqlock/memorystore"
)

// The suite must fail a store that breaks a promise. Each case below runs
// the suite's group in a child process of this test binary, against the
// memory store with one thing broken, and checks that the promises it
// breaks fail there; the same store with nothing broken passes them all.

// brokenEnv names, in a child run, what its store breaks.
const brokenEnv = "STORETEST_BROKEN"

// brokenCases are what a store breaks, and the promises that must fail
// for it.
var brokenCases = []struct {
	breaks string
	fails  []string
}{
	{"release-ignores-token", []string{"stale/release-after-expiry", "stale/wrong-token", "stale/double-release", "stale/locker"}},
	{"fences-repeat", []string{"fences/after-release", "fences/after-expiry", "fences/contention"}},
	{"validity-past-lease", []string{"lease/validity", "lease/expiry"}},
	{"empty-record-nil", []string{"records/empty"}},
	{"record-ignores-token", []string{"records/fenced-write", "records/fenced-write-after-expiry"}},
	{"releases-skip-the-line", []string{"lines/served-in-turn", "lines/leave-passes-turn", "inspect/handed-off"}},
	{"wakes-nobody", []string{"lines/wake-on-release"}},
	{"inspect-takes-free-keys", []string{"inspect/read-only"}},
	{"cancel-forgets", []string{"cancel/before-landing", "cancel/queued-before-landing"}},
	{"lapse-untold", []string{"contract/lapse-notice"}},
	// Lockers that waited in line, or asked for the record, took their
	// locks through AcquireQueued or AcquireOrRecord.
	{"lapse-untold-in-line", []string{"contract/lapse-notice"}},
	// Tells the live holder its lease lapsed whenever another caller finds
	// its key taken.
	{"lapse-told-live-holder", []string{"contract/lapse-notice"}},
	// Grants and renews the whole lease: no margin for a holder's timer
	// that fires late.
	{"validity-without-margin", []string{"lease/validity"}},
	// Keeps every record twenty times its retention: a replay answers long
	// after the caller's retention said the key is free for new work.
	{"records-outlive-retention", []string{"records/retention"}},
	// A full key's answer is the longest lease left among the permits,
	// not the shortest (broken_semaphore_test.go).
	{"permit-ttl-longest", []string{"semaphore/at-most-n"}},
	// Holds every call to the largest limit used on its key.
	{"permit-limit-largest", []string{"semaphore/limits-per-call"}},
	// Says it marks runs as it acquires, and marks nothing.
	{"acquire-marks-nothing", []string{"acquire-marks/first-run", "acquire-marks/queued", "acquire-marks/locker-once"}},
	// A cancel leaves the mark its acquire made, of a run that never
	// started.
	{"cancel-keeps-mark", []string{"acquire-marks/cancel"}},
}

func TestSuiteFailsBrokenStores(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the suite in child processes")
	}
	var all []string
	for _, bc := range brokenCases {
		all = append(all, bc.fails...)
	}
	t.Run("nothing-broken", func(t *testing.T) {
		out, err := runBrokenChild(t, "nothing", all)
		if err != nil || strings.Contains(out, "--- FAIL") {
			t.Fatalf("the suite fails the memory store wrapped with nothing broken (%v):\n%s", err, out)
		}
	})
	for _, bc := range brokenCases {
		t.Run(bc.breaks, func(t *testing.T) {
			t.Parallel() // children wait for the most part
			out, err := runBrokenChild(t, bc.breaks, bc.fails)
			var exit *exec.ExitError
			if !errors.As(err, &exit) {
				t.Fatalf("the suite passed a store whose %s (%v):\n%s", bc.breaks, err, out)
			}
			for _, p := range bc.fails {
				if !strings.Contains(out, "--- FAIL: TestBrokenStore/"+p+" (") {
					t.Errorf("the suite did not fail %s for a store whose %s:\n%s", p, bc.breaks, out)
				}
			}
		})
	}
}

// runBrokenChild runs promises ("group/promise") of TestBrokenStore in a
// child process, against a store that breaks what breaks names.
func runBrokenChild(t *testing.T, breaks string, promises []string) (string, error) {
	t.Helper()
	var groups, names []string
	for _, p := range promises {
		g, n, _ := strings.Cut(p, "/")
		groups, names = append(groups, regexp.QuoteMeta(g)), append(names, regexp.QuoteMeta(n))
	}
	run := "^TestBrokenStore$/^(" + strings.Join(groups, "|") + ")$/^(" + strings.Join(names, "|") + ")$"
	cmd := exec.Command(os.Args[0], "-test.run="+run, "-test.v", "-test.count=1", "-test.timeout=5m")
	cmd.Env = append(os.Environ(), brokenEnv+"="+breaks)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestBrokenStore is the child run: the suite against a store that breaks
// what $STORETEST_BROKEN says.
func TestBrokenStore(t *testing.T) {
	breaks := os.Getenv(brokenEnv)
	if breaks == "" {
		t.Skip("run as a child of TestSuiteFailsBrokenStores")
	}
	if !regexp.MustCompile(`^[a-z-]+$`).MatchString(breaks) {
		t.Fatalf("%s=%q", brokenEnv, breaks)
	}
	storetest.Run(t, storetest.Harness{
		New: func(testing.TB) core.Store { return &brokenStore{Store: memorystore.New(), breaks: breaks} },
	})
}

// brokenStore is a memory store with a cancel of its own (the memory
// store needs none), which breaks one promise on demand.
type brokenStore struct {
	*memorystore.Store
	breaks    string
	cancelled sync.Map // tokens whose acquire was cancelled
	marked    sync.Map // tokens whose acquire set their own run mark

	mu      sync.Mutex
	notices map[string]store.LapseNotice // key → its holder's notice
	limits  map[string]int               // key → the largest permit limit asked for (permit-limit-largest)
}

var errCancelled = errors.New("brokenStore: acquire cancelled")

func (s *brokenStore) Acquire(ctx context.Context, l store.Lease) (store.Grant, error) {
	if _, ok := s.cancelled.Load(l.Token); ok {
		return store.Grant{}, errCancelled
	}
	ctx = s.noticeFor(ctx, false)
	g, err := s.Store.Acquire(ctx, l)
	return s.broken(ctx, g, l, err), err
}

// noticeFor is ctx as the store hands it on to the memory store, with its
// lapse notice dropped where s drops it; inLine says the acquire was made
// in line or asks for the record.
func (s *brokenStore) noticeFor(ctx context.Context, inLine bool) context.Context {
	if s.breaks == "lapse-untold" || s.breaks == "lapse-untold-in-line" && inLine {
		return store.WithLapseNotice(ctx, nil)
	}
	return ctx
}

// broken breaks the answer to an acquire of l, whose context was ctx, as s
// breaks grants.
func (s *brokenStore) broken(ctx context.Context, g store.Grant, l store.Lease, err error) store.Grant {
	if s.breaks == "lapse-told-live-holder" {
		s.tellLiveHolder(ctx, l, g, err)
	}
	if g.Fence == 0 {
		return g
	}
	switch s.breaks {
	case "fences-repeat":
		g.Fence = 7
	case "validity-past-lease":
		g.Validity = 2 * l.TTL
	case "validity-without-margin":
		g.Validity = l.TTL
	}
	return g
}

// tellLiveHolder tells the holder of l's key that its lease lapsed when the
// acquire of l (whose context was ctx) found the key taken, lapsed or not.
func (s *brokenStore) tellLiveHolder(ctx context.Context, l store.Lease, g store.Grant, err error) {
	s.mu.Lock()
	if s.notices == nil {
		s.notices = make(map[string]store.LapseNotice)
	}
	holder := s.notices[l.Key]
	if err == nil && g.Fence != 0 {
		s.notices[l.Key], holder = store.LapseNoticeFrom(ctx), nil
	}
	s.mu.Unlock()
	if holder != nil && errors.Is(err, core.ErrNotObtained) {
		if finish := holder.Lapse(); finish != nil {
			finish()
		}
	}
}

func (s *brokenStore) Extend(ctx context.Context, leases []store.Lease) []store.Renewal {
	r := s.Store.Extend(ctx, leases)
	if s.breaks == "validity-without-margin" {
		for i := range r {
			if r[i].Err == nil {
				r[i].Validity = leases[i].TTL
			}
		}
	}
	return r
}

func (s *brokenStore) AcquireQueued(ctx context.Context, l store.Lease, waiter string, withRecord bool) (store.Grant, []byte, error) {
	if _, ok := s.cancelled.Load(l.Token); ok {
		return store.Grant{}, nil, errCancelled
	}
	ctx = s.noticeFor(ctx, true)
	g, rec, err := s.Store.AcquireQueued(ctx, s.marking(l), waiter, withRecord)
	s.noteMark(l, g, err)
	return s.broken(ctx, g, l, err), rec, err
}

// marking is l as the store's acquire takes it.
func (s *brokenStore) marking(l store.Lease) store.Lease {
	if s.breaks == "acquire-marks-nothing" {
		l.Mark = store.RunMark{}
	}
	return l
}

// noteMark remembers an acquire that set its token's own mark, which its
// cancel takes back.
func (s *brokenStore) noteMark(l store.Lease, g store.Grant, err error) {
	if err == nil && g.Fence != 0 && l.Mark.Retention > 0 && !g.InDoubt {
		s.marked.Store(l.Token, true)
	}
}

func (s *brokenStore) Release(ctx context.Context, key, token string) error {
	if s.breaks == "releases-skip-the-line" {
		if _, err := s.Store.TTL(ctx, key, token); err != nil {
			return err
		}
		s.Store.Delete(key)
		return nil
	}
	err := s.Store.Release(ctx, key, token)
	if s.breaks == "release-ignores-token" && errors.Is(err, core.ErrNotHeld) {
		s.Store.Delete(key)
		return nil
	}
	return err
}

func (s *brokenStore) Cancel(ctx context.Context, l store.Lease) error {
	if s.breaks != "cancel-forgets" {
		s.cancelled.Store(l.Token, true)
	}
	if _, ok := s.marked.Load(l.Token); ok && s.breaks != "cancel-keeps-mark" {
		_ = s.Store.UnmarkRun(ctx, l.Key, l.Token)
	}
	return s.Store.Release(ctx, l.Key, l.Token)
}

func (s *brokenStore) AcquireOrRecord(ctx context.Context, l store.Lease) (store.Grant, []byte, error) {
	ctx = s.noticeFor(ctx, true)
	g, rec, err := s.Store.AcquireOrRecord(ctx, s.marking(l))
	s.noteMark(l, g, err)
	if s.breaks == "empty-record-nil" && rec != nil && len(rec) == 0 {
		rec = nil
	}
	return s.broken(ctx, g, l, err), rec, err
}

func (s *brokenStore) ReleaseRecording(ctx context.Context, key, token string, record []byte, retention time.Duration) error {
	if s.breaks == "records-outlive-retention" {
		retention *= 20
	}
	err := s.Store.ReleaseRecording(ctx, key, token, record, retention)
	if s.breaks == "record-ignores-token" && errors.Is(err, core.ErrNotHeld) {
		// Writes for whoever asks: takes the key from its holder to do it.
		s.Store.Delete(key)
		if _, err := s.Store.Acquire(ctx, store.Lease{Key: key, Token: token, TTL: time.Minute}); err != nil {
			return err
		}
		return s.Store.ReleaseRecording(ctx, key, token, record, retention)
	}
	return err
}

func (s *brokenStore) Subscribe(prefix, instance string, wake func(key, waiter string)) store.Subscription {
	if s.breaks == "wakes-nobody" {
		wake = func(string, string) {}
	}
	return s.Store.Subscribe(prefix, instance, wake)
}

func (s *brokenStore) Inspect(ctx context.Context, key string) (core.Holding, error) {
	hd, err := s.Store.Inspect(ctx, key)
	if s.breaks == "inspect-takes-free-keys" && err == nil && !hd.Held {
		_, _ = s.Store.Acquire(ctx, store.Lease{Key: key, Token: "inspector", TTL: time.Minute})
	}
	return hd, err
}
