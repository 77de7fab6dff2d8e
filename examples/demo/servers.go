package main

import (
	"context"
	"errors"
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
	url   string
	most  atomic.Int32 // most requests inside the handler at once
	in    atomic.Int32
	close func()
}

// handle is the slow handler every framework runs: it records how many
// requests are inside at once.
func (s *server) handle() {
	n := s.in.Add(1)
	defer s.in.Add(-1)
	for m := s.most.Load(); n > m && !s.most.CompareAndSwap(m, n); m = s.most.Load() {
	}
	time.Sleep(work)
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
	r.POST("/orders", ginlock.New(ginlock.Config{
		Locker: l, Key: ginlock.FromContext("user"), Mode: sc.mode, MaxWaiters: sc.maxWaiters,
	}), func(c *gin.Context) {
		s.handle()
		c.Status(http.StatusCreated)
	})
	return r
}

func echoServer(s *server, l *core.Locker, sc scenario) http.Handler {
	e := echo.New()
	e.HideBanner = true
	auth := func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error { c.Set("user", bearer(c.Request().Header)); return next(c) }
	}
	lock := echolock.WithConfig(echolock.Config{
		Locker: l, Key: echolock.FromContext("user"), Mode: sc.mode, MaxWaiters: sc.maxWaiters,
	})
	e.POST("/orders", func(c echo.Context) error {
		s.handle()
		return c.NoContent(http.StatusCreated)
	}, auth, lock)
	return e
}

func echo5Server(s *server, l *core.Locker, sc scenario) http.Handler {
	e := echo5.New()
	auth := func(next echo5.HandlerFunc) echo5.HandlerFunc {
		return func(c *echo5.Context) error { c.Set("user", bearer(c.Request().Header)); return next(c) }
	}
	lock := echo5lock.WithConfig(echo5lock.Config{
		Key: echo5lock.FromContext("user"), Config: httplock.Config{Locker: l, Mode: sc.mode, MaxWaiters: sc.maxWaiters},
	})
	e.POST("/orders", func(c *echo5.Context) error {
		s.handle()
		return c.NoContent(http.StatusCreated)
	}, auth, lock)
	return e
}

type userKey struct{}

func netHTTPServer(s *server, l *core.Locker, sc scenario) http.Handler {
	lock := httplock.New(httplock.Config{
		Locker: l, Key: httplock.FromContext(userKey{}), Mode: sc.mode, MaxWaiters: sc.maxWaiters,
	})
	mux := http.NewServeMux()
	mux.Handle("POST /orders", lock(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		s.handle()
		w.WriteHeader(http.StatusCreated)
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
