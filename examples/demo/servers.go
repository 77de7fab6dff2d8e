package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/labstack/echo/v4"
	echo5 "github.com/labstack/echo/v5"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/echo5lock"
	"github.com/reqlock/reqlock/echolock"
	"github.com/reqlock/reqlock/ginlock"
	"github.com/reqlock/reqlock/httplock"
)

// server is one framework's server on a loopback port.
type server struct {
	url    string
	most   atomic.Int32 // most requests inside the handler at once
	in     atomic.Int32
	orders atomic.Int64 // handler runs: each makes an order
	close  func()
}

// handle is the slow handler every framework runs: it records how many
// requests are inside at once, and makes a new order each run.
func (s *server) handle() order {
	n := s.in.Add(1)
	defer s.in.Add(-1)
	for m := s.most.Load(); n > m && !s.most.CompareAndSwap(m, n); m = s.most.Load() {
	}
	time.Sleep(work)
	return order{ID: fmt.Sprintf("ord_%d", s.orders.Add(1))}
}

// order is the handler's answer.
type order struct {
	ID string `json:"id"`
}

// replayConfig is the replay scene's: a duplicate waits for the first and
// gets its response again; other scenes have none.
func replayConfig(sc scenario) *httplock.ReplayConfig {
	if !sc.replay {
		return nil
	}
	return &httplock.ReplayConfig{}
}

// bearer stands in for authentication; a real one verifies the credential.
func bearer(h http.Header) string {
	user, _ := strings.CutPrefix(h.Get("Authorization"), "Bearer ")
	return user
}

type framework struct {
	name    string
	handler func(s *server, l *core.Locker, sc scenario) http.Handler
}

var frameworks = []framework{
	{"gin", ginServer},
	{"echo", echoServer},
	{"echo v5", echo5Server},
	{"net/http", netHTTPServer},
}

func ginServer(s *server, l *core.Locker, sc scenario) http.Handler {
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.Use(gin.Recovery(), func(c *gin.Context) { c.Set("user", bearer(c.Request.Header)) })
	key := ginlock.FromContext("user")
	if sc.replay { // the user's own Idempotency-Key: never another user's response
		key = httplock.Join(key, httplock.IdempotencyKey())
	}
	r.POST("/orders", ginlock.New(httplock.Config{
		Locker: l, Key: key, Mode: sc.mode, MaxWaiters: sc.maxWaiters, Replay: replayConfig(sc), Telemetry: httpTelemetry,
	}), func(c *gin.Context) {
		c.JSON(http.StatusCreated, s.handle())
	})
	return r
}

func echoServer(s *server, l *core.Locker, sc scenario) http.Handler {
	e := echo.New()
	e.HideBanner = true
	auth := func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error { c.Set("user", bearer(c.Request().Header)); return next(c) }
	}
	key := echolock.FromContext("user")
	if sc.replay {
		key = httplock.Join(key, httplock.IdempotencyKey())
	}
	lock := echolock.New(httplock.Config{
		Locker: l, Key: key, Mode: sc.mode, MaxWaiters: sc.maxWaiters, Replay: replayConfig(sc), Telemetry: httpTelemetry,
	})
	e.POST("/orders", func(c echo.Context) error {
		return c.JSON(http.StatusCreated, s.handle())
	}, auth, lock)
	return e
}

func echo5Server(s *server, l *core.Locker, sc scenario) http.Handler {
	e := echo5.New()
	auth := func(next echo5.HandlerFunc) echo5.HandlerFunc {
		return func(c *echo5.Context) error { c.Set("user", bearer(c.Request().Header)); return next(c) }
	}
	key := echo5lock.FromContext("user")
	if sc.replay {
		key = httplock.Join(key, httplock.IdempotencyKey())
	}
	lock := echo5lock.New(httplock.Config{
		Locker: l, Key: key, Mode: sc.mode, MaxWaiters: sc.maxWaiters, Replay: replayConfig(sc), Telemetry: httpTelemetry,
	})
	e.POST("/orders", func(c *echo5.Context) error {
		return c.JSON(http.StatusCreated, s.handle())
	}, auth, lock)
	return e
}

type userKey struct{}

func netHTTPServer(s *server, l *core.Locker, sc scenario) http.Handler {
	key := httplock.FromContext(userKey{})
	if sc.replay {
		key = httplock.Join(key, httplock.IdempotencyKey())
	}
	lock := httplock.New(httplock.Config{
		Locker: l, Key: key, Mode: sc.mode, MaxWaiters: sc.maxWaiters, Replay: replayConfig(sc), Telemetry: httpTelemetry,
	})
	mux := http.NewServeMux()
	mux.Handle("POST /orders", lock(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		body, _ := json.Marshal(s.handle())
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write(body)
	})))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := context.WithValue(r.Context(), userKey{}, bearer(r.Header))
		mux.ServeHTTP(w, r.WithContext(ctx))
	})
}

// start serves fw's handler on a free 127.0.0.1 port.
func start(fw framework, l *core.Locker, sc scenario) (*server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &server{url: "http://" + ln.Addr().String()}
	hs := &http.Server{Handler: fw.handler(s, l, sc), ReadHeaderTimeout: 5 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			panic(err)
		}
	}()
	s.close = func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(ctx)
		<-done
	}
	return s, nil
}
