package main

import (
	"context"
	"io"
	"net/http"
	"sync"
	"time"
)

type result struct {
	ok, conflict, tooMany, other int
	wall                         time.Duration
}

// fire sends n concurrent POSTs as user and counts the answers. Each request
// is bounded by ctx and the client's timeout.
func fire(ctx context.Context, url, user string, n int) result {
	client := &http.Client{Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	var (
		mu  sync.Mutex
		res result
		wg  sync.WaitGroup
	)
	start := time.Now()
	for range n {
		wg.Go(func() {
			status := post(ctx, client, url, user)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case status >= 200 && status < 300:
				res.ok++
			case status == http.StatusConflict:
				res.conflict++
			case status == http.StatusTooManyRequests:
				res.tooMany++
			default:
				res.other++
			}
		})
	}
	wg.Wait()
	res.wall = time.Since(start)
	return res
}

func post(ctx context.Context, c *http.Client, url, user string) int {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, nil)
	if err != nil {
		return 0
	}
	req.Header.Set("Authorization", "Bearer "+user)
	resp, err := c.Do(req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}
