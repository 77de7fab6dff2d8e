package httpcases

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"time"

	"github.com/reqlock/reqlock/httplock"
)

// A waiting POST whose client leaves must not run: net/http notices a
// closed connection only once the body has been read, so the handler ran
// for the departed client as soon as the holder released.
func clientGoneWithBody(e *Env) {
	p := e.Probe()
	cfg := httplock.Config{Locker: e.Locker(), Mode: httplock.Wait, MaxWait: 30 * time.Second}
	url := e.Serve(userRoute("POST", "/orders", cfg, p.Block))
	finish := e.Hold(p, "POST", url+"/orders", UserHeader, "alice")

	ctx, cancel := context.WithCancel(context.Background())
	waiter := make(chan Result, 1)
	go func() {
		waiter <- e.DoBody(ctx, "POST", url+"/orders", bytes.Repeat([]byte("o"), 4096), UserHeader, "alice")
	}()
	time.Sleep(300 * time.Millisecond) // let it reach the wait
	cancel()
	if r := <-waiter; r.Err == nil {
		e.T.Fatalf("cancelled request answered %d", r.Status)
	}
	time.Sleep(300 * time.Millisecond) // let the server see the disconnect
	finish()
	time.Sleep(300 * time.Millisecond) // time for a wrongly woken waiter to run
	if n := p.Calls("alice"); n != 1 {
		e.T.Fatalf("handler ran %d times; the disconnected waiter must not run", n)
	}
}

// BodyHashHeader carries the hex SHA-256 of the body a request sends.
const BodyHashHeader = "X-Body-SHA256"

// A body read before waiting reaches the handler whole and unchanged, small
// or over the bound that is read ahead.
func bodyIntactAfterWait(e *Env) {
	p := e.Probe()
	check := func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(UserHeader) == "alice" {
			p.Block(w, r)
			return
		}
		h := sha256.New()
		if _, err := io.Copy(h, r.Body); err != nil || hex.EncodeToString(h.Sum(nil)) != r.Header.Get(BodyHashHeader) {
			w.WriteHeader(http.StatusUnprocessableEntity)
		}
	}
	cfg := httplock.Config{Locker: e.Locker(), Mode: httplock.Wait, MaxWait: 30 * time.Second, Scope: "body"}
	url := e.Serve(Route{Method: "POST", Path: "/orders", Lock: cfg, Key: KeySource{Kind: FromHeader, Name: "X-Key"}, Handler: http.HandlerFunc(check)})
	finish := e.Hold(p, "POST", url+"/orders", UserHeader, "alice", "X-Key", "k")
	var results []<-chan Result
	for _, n := range []int{1, 1000, 1 << 20} {
		body := bytes.Repeat([]byte{byte(n)}, n)
		sum := sha256.Sum256(body)
		ch := make(chan Result, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			ch <- e.DoBody(ctx, "POST", url+"/orders", body, UserHeader, "bob", "X-Key", "k", BodyHashHeader, hex.EncodeToString(sum[:]))
		}()
		results = append(results, ch)
	}
	time.Sleep(300 * time.Millisecond) // let them reach the wait
	finish()
	for _, ch := range results {
		expectOK(e, <-ch)
	}
}
