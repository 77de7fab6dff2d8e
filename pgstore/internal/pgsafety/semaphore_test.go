package pgsafety_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/storetest/faultproxy"
	"github.com/reqlock/reqlock/internal/permittest"
	"github.com/reqlock/reqlock/internal/pgtest"
	"github.com/reqlock/reqlock/pgstore"
)

// The semaphore's rows on PostgreSQL, as internal/safety's on Redis: three
// permits of one key (internal/permittest), taken by instances while a
// holder process is killed or stopped, an instance's bytes are delayed, or
// Postgres is killed and restarted. Checked: never more than three holders
// trusting their permits at once, and no stale write taken by the register
// fenced for three permits.

const (
	semN     = 3
	semTTL   = 500 * time.Millisecond
	semLoad  = 2500 * time.Millisecond
	semQuick = 3 * time.Millisecond
	semHold  = 200 * time.Millisecond
)

func TestSafetySemaphore(t *testing.T) {
	if permittest.Child(semChildStore) {
		return
	}
	type scenario struct {
		name string
		run  func(t *testing.T, r *permittest.Run, srv *pgtest.Server, conn string) permittest.Expect
	}
	var rows []permittest.Row
	for _, sc := range []scenario{
		{"no faults, 3 instances + 2 processes", func(t *testing.T, r *permittest.Run, _ *pgtest.Server, conn string) permittest.Expect {
			r.Spawn("p1", []string{conn}, semQuick)
			r.Spawn("p2", []string{conn}, semQuick)
			time.Sleep(semLoad)
			return permittest.Expect{}
		}},
		{"holder process killed (kill -9) mid-hold, twice", func(t *testing.T, r *permittest.Run, _ *pgtest.Server, conn string) permittest.Expect {
			for _, name := range []string{"p1", "p2"} {
				p := r.Spawn(name, []string{conn}, semHold)
				if !r.Held(name, 10*time.Second) {
					t.Fatalf("process %s never held a permit", name)
				}
				time.Sleep(semHold / 4)
				p.Kill()
				time.Sleep(semLoad / 2)
			}
			return permittest.Expect{}
		}},
		{"holder process SIGSTOPped for 2 leases mid-hold", func(t *testing.T, r *permittest.Run, _ *pgtest.Server, conn string) permittest.Expect {
			p := r.Spawn("p1", []string{conn}, semHold)
			for until := time.Now().Add(semLoad); time.Now().Before(until); {
				if !r.Held("p1", 10*time.Second) {
					t.Fatal("the process never held a permit")
				}
				time.Sleep(semHold / 8)
				p.Pause(2 * semTTL)
				time.Sleep(semTTL / 2)
			}
			return permittest.Expect{Refused: true}
		}},
		{"2 of 5 instances' bytes delayed past the lease, on and off", func(t *testing.T, r *permittest.Run, srv *pgtest.Server, conn string) permittest.Expect {
			p := faultproxy.Start(t, srv.Addr)
			slow := strings.Replace(conn, srv.Addr, p.Addr(), 1)
			for _, n := range []string{"slow1", "slow2"} {
				r.StartLocal(n, pgstore.New(pgtest.OpenPool(t, slow, quick)), semQuick)
			}
			for until, on := time.Now().Add(semLoad), true; time.Now().Before(until); on = !on {
				d := time.Duration(0)
				if on {
					d = semTTL + 100*time.Millisecond
				}
				p.Delay(faultproxy.Upstream, d)
				time.Sleep(400 * time.Millisecond)
			}
			p.Heal()
			return permittest.Expect{}
		}},
		{"Postgres killed (kill -9) and restarted while held", func(t *testing.T, r *permittest.Run, srv *pgtest.Server, conn string) permittest.Expect {
			for until := time.Now().Add(semLoad); time.Now().Before(until); {
				if !r.Held("a", 10*time.Second) {
					t.Fatal("no permit held")
				}
				srv.Kill()
				srv.Restart(t)
				time.Sleep(semTTL)
			}
			return permittest.Expect{}
		}},
	} {
		t.Run(sc.name, func(t *testing.T) {
			srv := pgtest.Start(t)
			conn := srv.NewDatabase(t)
			admin := pgtest.OpenPool(t, conn, quick)
			if err := pgstore.New(admin).Migrate(context.Background()); err != nil {
				t.Fatal(err)
			}
			r := permittest.NewRun(t, semN, semTTL)
			for _, n := range []string{"a", "b", "c"} {
				r.StartLocal(n, pgstore.New(pgtest.OpenPool(t, conn, quick)), semQuick)
			}
			res := r.Check(sc.run(t, r, srv, conn))
			rows = append(rows, permittest.Row{Scenario: sc.name, Store: "postgres", Result: res})
		})
	}
	t.Logf("semaphore safety table:\n%s", permittest.Table(semN, rows))
}

// semChildStore is a child instance's store: the database at addrs[0],
// migrated by the parent.
func semChildStore(addrs []string) (core.Store, func()) {
	pool, err := pgxpool.New(context.Background(), addrs[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, "pgsafety child:", err)
		os.Exit(2)
	}
	return pgstore.New(pool), pool.Close
}
