package main

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/memorystore"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The demo's own claims, checked on the memory store: never two requests in
// the handler at once, and every request answered as the mode says.
func TestDemo(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rows, err := runAll(ctx, core.NewLocker(memorystore.New()))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(frameworks)*len(scenarios) {
		t.Fatalf("%d rows", len(rows))
	}
	for _, r := range rows {
		name := r.framework + "/" + r.scenario
		if r.mostInside != 1 {
			t.Errorf("%s: %d requests inside at once", name, r.mostInside)
		}
		if r.other != 0 || r.ok < 1 {
			t.Errorf("%s: %+v", name, r.result)
		}
		switch {
		case r.scenario == "reject" && r.ok+r.conflict != burst,
			r.scenario == "wait" && r.ok != burst,
			strings.Contains(r.scenario, "max") && (r.ok+r.tooMany != burst || r.ok > burst-1):
			t.Errorf("%s: %+v", name, r.result)
		}
	}
	var b strings.Builder
	printTable(&b, rows)
	if !strings.Contains(b.String(), "most inside at once") {
		t.Fatalf("table:\n%s", b.String())
	}
}

// The replay scene's claim, on the memory store: whatever became of the
// first try, the handler made one order, and every answer the client got
// names it; the last one is a replay.
func TestDemoReplay(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rows, err := runReplay(ctx, core.NewLocker(memorystore.New()))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(frameworks) {
		t.Fatalf("%d rows", len(rows))
	}
	for _, r := range rows {
		if r.runs != 1 || r.retry.status != 201 || r.retry.order != "ord_1" || r.later.order != "ord_1" || !r.later.replayed {
			t.Errorf("%s: %+v", r.framework, r)
		}
		if r.first.status != 0 && r.first.order != "ord_1" {
			t.Errorf("%s: first try got %v", r.framework, r.first)
		}
	}
	var b strings.Builder
	printReplay(&b, rows)
	if !strings.Contains(b.String(), "orders made") {
		t.Fatalf("table:\n%s", b.String())
	}
}

// With -metrics the demo prints what reqlock's metrics recorded: the HTTP
// outcomes of the bursts and the Locker's acquisitions, held count back at 0.
func TestDemoMetrics(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	m := newMeter()
	httpTelemetry = m.telemetry()
	defer func() { httpTelemetry = nil }()
	if _, err := runAll(ctx, core.NewLocker(memorystore.New(), core.WithTelemetry(*httpTelemetry))); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := m.print(ctx, &b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"reqlock.http.requests       http.response.status_code=409 outcome=rejected scope=POST /orders",
		"reqlock.http.requests       http.response.status_code=429 outcome=too_many_waiters",
		"reqlock.lock.acquisitions   mode=wait outcome=obtained store=memory",
		"reqlock.lock.hold.duration  outcome=released store=memory",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("metrics lack %q:\n%s", want, out)
		}
	}
	if !regexp.MustCompile(`reqlock\.lock\.held +store=memory +0\n`).MatchString(out) {
		t.Errorf("locks still held after the demo:\n%s", out)
	}
}
