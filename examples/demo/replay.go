package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
)

// The replay scene: a client gives up on its POST while the order is being
// made and sends it again with the same Idempotency-Key, as a client that
// timed out should. The handler makes one order; every answer names it.
var replayScene = scenario{name: "replay", mode: httplock.Wait, replay: true}

// attempt is one POST of the scene, as the client saw it.
type attempt struct {
	status   int // 0: no answer (timed out)
	order    string
	replayed bool
}

func (a attempt) String() string {
	if a.status == 0 {
		return "timed out"
	}
	s := fmt.Sprintf("%d %s", a.status, a.order)
	if a.replayed {
		s += " (replayed)"
	}
	return s
}

// replayRow is the scene on one framework.
type replayRow struct {
	framework    string
	first, retry attempt
	later        attempt // one more, after the retry
	runs         int64   // orders the handler made
}

// runReplay plays the scene on every framework.
func runReplay(ctx context.Context, locker *core.Locker) ([]replayRow, error) {
	var rows []replayRow
	run := rand.Text() // a new checkout per run: Redis keeps the last run's records for 24 h
	for i, fw := range frameworks {
		srv, err := start(fw, locker, replayScene)
		if err != nil {
			return nil, err
		}
		url, key := srv.url+"/orders", "checkout-"+run+"-"+strconv.Itoa(i)
		impatient := &http.Client{Timeout: work / 5}
		patient := &http.Client{Timeout: 10 * time.Second}
		row := replayRow{framework: fw.name}
		row.first = postOrder(ctx, impatient, url, "alice", key)
		row.retry = postOrder(ctx, patient, url, "alice", key)
		row.later = postOrder(ctx, patient, url, "alice", key)
		impatient.CloseIdleConnections()
		patient.CloseIdleConnections()
		srv.close()
		row.runs = srv.orders.Load()
		rows = append(rows, row)
	}
	return rows, nil
}

// postOrder sends POST /orders as user with the Idempotency-Key key.
func postOrder(ctx context.Context, c *http.Client, url, user, key string) attempt {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, nil)
	if err != nil {
		return attempt{}
	}
	req.Header.Set("Authorization", "Bearer "+user)
	req.Header.Set(httplock.HeaderIdempotencyKey, strconv.Quote(key))
	resp, err := c.Do(req)
	if err != nil {
		return attempt{}
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var o order
	_ = json.Unmarshal(body, &o)
	return attempt{status: resp.StatusCode, order: o.ID, replayed: resp.Header.Get(httplock.HeaderIdempotentReplayed) == "true"}
}

func printReplay(w io.Writer, rows []replayRow) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "framework\tfirst try\tretry, same key\tonce more\torders made\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%v\t%v\t%v\t%d\t\n", r.framework, r.first, r.retry, r.later, r.runs)
	}
	tw.Flush()
}
