// Command demo starts a Gin, an Echo v4, an Echo v5 and a net/http server on
// loopback, each with reqlock in front of the same slow handler, fires bursts
// of concurrent duplicate requests from one user at each, and prints what
// came back. Then, with replay on, a client that times out and retries
// gets the order the first run made, and the handler runs once.
//
// It is a module of its own (pgx is its dependency, not reqlock's); run it
// from its directory:
//
//	cd examples/demo
//	go run .                                   # memory store
//	REDIS_URL=redis://127.0.0.1:6379/0 go run .
//	DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres go run .
//	go run . -metrics                          # and print reqlock's metrics
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"text/tabwriter"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
)

const (
	burst = 20                    // concurrent duplicates per run
	work  = 25 * time.Millisecond // how long the handler takes
)

// scenario is one way of configuring the middleware.
type scenario struct {
	name       string
	mode       httplock.Mode
	maxWaiters int
	replay     bool
}

var scenarios = []scenario{
	{"reject", httplock.Reject, 0, false},
	{"wait", httplock.Wait, 0, false},
	{"wait, 5 waiters max", httplock.Wait, 5, false},
}

func main() {
	printMetrics := flag.Bool("metrics", false, "record reqlock's OpenTelemetry metrics and print them at the end")
	flag.Parse()

	store, which, closeStore, err := openStore()
	if err != nil {
		log.Fatal(err)
	}
	defer closeStore()

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	var m *meter
	var lockerOpts []core.Option
	if *printMetrics {
		m = newMeter()
		httpTelemetry = m.telemetry()
		lockerOpts = append(lockerOpts, core.WithTelemetry(*httpTelemetry))
	}

	fmt.Printf("%d concurrent POST /orders from one user per run; the handler takes %v; %s\n\n", burst, work, which)
	rows, err := runAll(ctx, core.NewLocker(store, lockerOpts...))
	if err != nil {
		log.Fatal(err)
	}
	printTable(os.Stdout, rows)
	fmt.Println("\nreject: one runs, the duplicates get 409 + Retry-After at once.")
	fmt.Println("wait: the duplicates queue and run one after another, never two at once.")
	fmt.Println("5 waiters max: one runs, five queue, the rest get 429 + Retry-After.")

	fmt.Printf("\nReplay: a client gives up on POST /orders after %v while the handler takes %v,\nthen retries with the same Idempotency-Key\n\n", work/5, work)
	replays, err := runReplay(ctx, core.NewLocker(store, lockerOpts...))
	if err != nil {
		log.Fatal(err)
	}
	printReplay(os.Stdout, replays)
	fmt.Println("\nThe retry waits for the first run and gets its response again: one order, however often the client asks.")

	if m != nil {
		fmt.Println("\nWhat reqlock's metrics said about all of the above:")
		if err := m.print(ctx, os.Stdout); err != nil {
			log.Fatal(err)
		}
	}
}

// row is one line of the table: one burst at one server.
type row struct {
	framework, scenario string
	result
	mostInside int32
}

// runAll fires one burst per framework and scenario.
func runAll(ctx context.Context, locker *core.Locker) ([]row, error) {
	var rows []row
	for _, fw := range frameworks {
		for _, sc := range scenarios {
			srv, err := start(fw, locker, sc)
			if err != nil {
				return nil, err
			}
			r := fire(ctx, srv.url+"/orders", "alice", burst)
			srv.close()
			rows = append(rows, row{fw.name, sc.name, r, srv.most.Load()})
		}
	}
	return rows, nil
}

func printTable(w io.Writer, rows []row) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "framework\tmode\trequests\t2xx\t409\t429\tother\tmost inside at once\twall time\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%v\t\n",
			r.framework, r.scenario, burst, r.ok, r.conflict, r.tooMany, r.other,
			r.mostInside, r.wall.Round(time.Millisecond))
	}
	tw.Flush()
}
