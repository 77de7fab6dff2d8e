// Package rpccases is the one table of end-to-end cases the RPC adapters
// (grpclock, connectlock) run: duplicates, Wait, Replay, a key reused for
// another request, the store down, hostile keys, a client gone, a handler
// that panics, streams, telemetry. Each adapter's test gives an Adapter
// that serves the cases' service through its interceptors on loopback and
// calls it with a real client; the cases speak only of codes, texts and
// headers, which gRPC and Connect share.
package rpccases

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
)

// The cases' service: a unary method and a server-streaming one, whose
// messages are google.protobuf.StringValue (wrapperspb) both ways.
const (
	Service      = "reqlock.test.Echo"
	UnaryMethod  = "/" + Service + "/Say"
	StreamMethod = "/" + Service + "/Watch"
)

// Code is an RPC status code, numbered as gRPC's and Connect's are.
type Code uint32

// The codes the cases expect.
const (
	OK                 Code = 0
	Canceled           Code = 1
	Unknown            Code = 2
	InvalidArgument    Code = 3
	ResourceExhausted  Code = 8
	FailedPrecondition Code = 9
	Aborted            Code = 10
	Internal           Code = 13
	Unavailable        Code = 14
)

func (c Code) String() string {
	names := map[Code]string{OK: "OK", Canceled: "Canceled", Unknown: "Unknown", InvalidArgument: "InvalidArgument",
		ResourceExhausted: "ResourceExhausted", FailedPrecondition: "FailedPrecondition", Aborted: "Aborted",
		Internal: "Internal", Unavailable: "Unavailable"}
	if n, ok := names[c]; ok {
		return n
	}
	return fmt.Sprintf("Code(%d)", uint32(c))
}

// KeySource says which of the adapter's key functions the lock uses.
type KeySource int

const (
	// KeyHeader is the metadata or header KeyHeaderName.
	KeyHeader KeySource = iota
	// KeyUser is the context value the stand-in auth sets under UserKey.
	KeyUser
	// KeyRequest is the request message's key, as RequestKey reads it.
	KeyRequest
	// KeyUserHeader is the adapter's Join of KeyUser and KeyHeader.
	KeyUserHeader
)

// The names of the metadata (or headers) the cases' clients send.
const (
	KeyHeaderName  = "x-key"
	UserHeaderName = "x-user"
)

// UserKey is the context key under which the stand-in auth puts the value
// of the x-user metadata.
type UserKey struct{}

// RequestKey is the key a request's text names: up to its first '|'. The
// text "refuse" is refused, as a FromRequest func refuses a bad message.
func RequestKey(text string) (string, error) {
	if text == "refuse" {
		return "", fmt.Errorf("rpccases: refused request")
	}
	key, _, _ := strings.Cut(text, "|")
	return key, nil
}

// Config is what a case sets on the adapter under test; HTTPLock is the
// configuration the adapter's interceptors take.
type Config struct {
	Locker       *core.Locker
	Key          KeySource
	Mode         httplock.Mode
	Limit        int
	MaxWait      time.Duration
	MaxWaiters   int
	StoreTimeout time.Duration
	FailOpen     bool
	KeyRequired  bool
	Replay       bool
	Telemetry    *core.Telemetry
	Logger       *slog.Logger
	// Traced, when set, puts the adapter's framework's own OpenTelemetry
	// instrumentation (otelgrpc's stats handler, otelconnect's
	// interceptor) outermost, recording server spans with it.
	Traced trace.TracerProvider
}

// HTTPLock is c as the adapters take it, with the key function Key names:
// the same on every RPC adapter, since their keys are httplock's.
func (c Config) HTTPLock() httplock.Config {
	cfg := httplock.Config{
		Locker: c.Locker, Key: keyFunc(c.Key), Mode: c.Mode, Limit: c.Limit, MaxWait: c.MaxWait, MaxWaiters: c.MaxWaiters,
		StoreTimeout: c.StoreTimeout, FailOpen: c.FailOpen, KeyRequired: c.KeyRequired,
		Telemetry: c.Telemetry, Logger: c.Logger,
	}
	if c.Replay {
		cfg.Replay = &httplock.ReplayConfig{}
	}
	return cfg
}

// keyFunc is the key function k names.
func keyFunc(k KeySource) httplock.KeyFunc {
	header := httplock.FromHeader(KeyHeaderName)
	user := httplock.FromContext(UserKey{})
	switch k {
	case KeyUser:
		return user
	case KeyRequest:
		return httplock.FromMessage(func(_ context.Context, msg any) (string, error) {
			return RequestKey(msg.(*wrapperspb.StringValue).GetValue())
		})
	case KeyUserHeader:
		return httplock.Join(user, header)
	}
	return header
}

// Handlers are the service's methods as a case writes them.
type Handlers struct {
	// Unary answers a unary call's text (nil: with "ok").
	Unary func(ctx context.Context, text string) (string, error)
	// Stream sends a server stream's messages (nil: one, "ok").
	Stream func(ctx context.Context, text string, send func(string) error) error
	// Arrived, when set, is called by the stand-in auth for every call,
	// right before the lock: the call has reached the server.
	Arrived func()
}

// Call is one call a case makes.
type Call struct {
	Keys []string // KeyHeaderName values: none, one, or more to send it twice
	User string   // UserHeaderName, "" for none
	Text string   // the request message's value
}

// Result is how a call ended.
type Result struct {
	Code       Code
	Message    string
	Text       string        // the response message's value (unary, OK)
	Replayed   bool          // the response carried idempotent-replayed: true
	RetryDelay time.Duration // RetryInfo's, 0 without one
}

// Stream is an open server stream.
type Stream interface {
	// Recv returns the next message's text, or the result that ended the
	// stream (Code OK for a clean end).
	Recv() (text string, end *Result)
}

// Client calls the service on one server.
type Client interface {
	Unary(ctx context.Context, c Call) Result
	Stream(ctx context.Context, c Call) Stream
	// Served is the code the server answered its next finished call with,
	// as its outermost interceptor saw it.
	Served(t testing.TB) Code
}

// Adapter is an RPC adapter under test.
type Adapter struct {
	Name string
	// Serve starts a server on a free loopback port with h behind, from
	// outermost in: a recorder of the codes answered (Client.Served), a
	// recovery that answers a panic with Internal, the stand-in auth
	// (UserHeaderName under UserKey), and the adapter's interceptors built
	// from cfg. Server and client stop when the test ends.
	Serve func(t testing.TB, cfg Config, h Handlers) Client
}
