package connectlock_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"connectrpc.com/connect"
	"connectrpc.com/otelconnect"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/reqlock/reqlock/connectlock"
	"github.com/reqlock/reqlock/internal/rpccases"
)

// TestCases runs the RPC adapters' shared cases on a real Connect server on
// loopback, on the memory store and on Redis, with the binary and the JSON
// codec: a retry's fingerprint is the message's, whichever codec sent it.
func TestCases(t *testing.T) {
	t.Run("proto", func(t *testing.T) { rpccases.Run(t, adapter()) })
	t.Run("json", func(t *testing.T) { rpccases.Run(t, adapter(connect.WithProtoJSON())) })
}

func adapter(opts ...connect.ClientOption) rpccases.Adapter {
	return rpccases.Adapter{Name: "connect", Serve: func(t testing.TB, cfg rpccases.Config, h rpccases.Handlers) rpccases.Client {
		return serveCases(t, cfg, h, opts...)
	}}
}

// echoHandlers are the cases' service as Connect handlers, with opts.
func echoHandlers(h rpccases.Handlers, opts ...connect.HandlerOption) *http.ServeMux {
	unary := h.Unary
	if unary == nil {
		unary = func(context.Context, string) (string, error) { return "ok", nil }
	}
	stream := h.Stream
	if stream == nil {
		stream = func(_ context.Context, _ string, send func(string) error) error { return send("ok") }
	}
	mux := http.NewServeMux()
	mux.Handle(rpccases.UnaryMethod, connect.NewUnaryHandler(rpccases.UnaryMethod,
		func(ctx context.Context, req *connect.Request[wrapperspb.StringValue]) (*connect.Response[wrapperspb.StringValue], error) {
			out, err := unary(ctx, req.Msg.GetValue())
			if err != nil {
				return nil, err
			}
			return connect.NewResponse(wrapperspb.String(out)), nil
		}, opts...))
	mux.Handle(rpccases.StreamMethod, connect.NewServerStreamHandler(rpccases.StreamMethod,
		func(ctx context.Context, req *connect.Request[wrapperspb.StringValue], ss *connect.ServerStream[wrapperspb.StringValue]) error {
			return stream(ctx, req.Msg.GetValue(), func(s string) error { return ss.Send(wrapperspb.String(s)) })
		}, opts...))
	return mux
}

func serveCases(t testing.TB, c rpccases.Config, h rpccases.Handlers, opts ...connect.ClientOption) rpccases.Client {
	t.Helper()
	lock, err := connectlock.NewInterceptor(c.HTTPLock())
	if err != nil {
		t.Fatal(err)
	}
	cl := &casesClient{served: make(chan rpccases.Code, 100)}
	served := func(err error) {
		code := rpccases.OK
		if err != nil {
			code = rpccases.Code(connect.CodeOf(err))
		}
		select {
		case cl.served <- code:
		default:
		}
	}
	auth := func(ctx context.Context, header http.Header) context.Context {
		if h.Arrived != nil {
			defer h.Arrived()
		}
		if u := header.Values(rpccases.UserHeaderName); len(u) == 1 {
			return context.WithValue(ctx, rpccases.UserKey{}, u[0])
		}
		return ctx
	}
	var outermost []connect.Interceptor
	if c.Traced != nil {
		otel, err := otelconnect.NewInterceptor(otelconnect.WithTracerProvider(c.Traced), otelconnect.WithMeterProvider(metricnoop.NewMeterProvider()))
		if err != nil {
			t.Fatal(err)
		}
		outermost = append(outermost, otel)
	}
	mux := echoHandlers(h,
		connect.WithInterceptors(append(outermost, interceptor{
			unary: func(next connect.UnaryFunc) connect.UnaryFunc {
				return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
					resp, err := next(ctx, req)
					served(err)
					return resp, err
				}
			},
			stream: func(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
				return func(ctx context.Context, conn connect.StreamingHandlerConn) error {
					err := next(ctx, conn)
					served(err)
					return err
				}
			},
		})...),
		connect.WithRecover(func(context.Context, connect.Spec, http.Header, any) error {
			return connect.NewError(connect.CodeInternal, errors.New("handler panicked"))
		}),
		connect.WithInterceptors(interceptor{
			unary: func(next connect.UnaryFunc) connect.UnaryFunc {
				return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
					return next(auth(ctx, req.Header()), req)
				}
			},
			stream: func(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
				return func(ctx context.Context, conn connect.StreamingHandlerConn) error {
					return next(auth(ctx, conn.RequestHeader()), conn)
				}
			},
		}, lock))
	srv := httptest.NewServer(mux) // on 127.0.0.1
	hc := srv.Client()
	t.Cleanup(func() {
		hc.CloseIdleConnections()
		srv.Close()
	})
	cl.unary = connect.NewClient[wrapperspb.StringValue, wrapperspb.StringValue](hc, srv.URL+rpccases.UnaryMethod, opts...)
	cl.stream = connect.NewClient[wrapperspb.StringValue, wrapperspb.StringValue](hc, srv.URL+rpccases.StreamMethod, opts...)
	return cl
}

// interceptor is a handler-side interceptor made of two funcs.
type interceptor struct {
	unary  func(connect.UnaryFunc) connect.UnaryFunc
	stream func(connect.StreamingHandlerFunc) connect.StreamingHandlerFunc
}

func (i interceptor) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc { return i.unary(next) }
func (i interceptor) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return next
}
func (i interceptor) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return i.stream(next)
}

type casesClient struct {
	unary, stream *connect.Client[wrapperspb.StringValue, wrapperspb.StringValue]
	served        chan rpccases.Code
}

// request is c as a Connect request.
func request(c rpccases.Call) *connect.Request[wrapperspb.StringValue] {
	req := connect.NewRequest(wrapperspb.String(c.Text))
	for _, k := range c.Keys {
		req.Header().Add(rpccases.KeyHeaderName, k)
	}
	if c.User != "" {
		req.Header().Set(rpccases.UserHeaderName, c.User)
	}
	return req
}

// result is how err ended a call.
func result(err error) rpccases.Result {
	r := rpccases.Result{Code: rpccases.Code(connect.CodeOf(err))}
	var ce *connect.Error
	if errors.As(err, &ce) {
		r.Message = ce.Message()
		for _, d := range ce.Details() {
			if v, derr := d.Value(); derr == nil {
				if ri, ok := v.(*errdetails.RetryInfo); ok {
					r.RetryDelay = ri.GetRetryDelay().AsDuration()
				}
			}
		}
	}
	return r
}

func (c *casesClient) Unary(ctx context.Context, call rpccases.Call) rpccases.Result {
	res, err := c.unary.CallUnary(ctx, request(call))
	if err != nil {
		return result(err)
	}
	return rpccases.Result{Text: res.Msg.GetValue(), Replayed: res.Header().Get(connectlock.HeaderReplayed) == "true"}
}

func (c *casesClient) Stream(ctx context.Context, call rpccases.Call) rpccases.Stream {
	s, err := c.stream.CallServerStream(ctx, request(call))
	return &casesStream{s: s, err: err}
}

func (c *casesClient) Served(t testing.TB) rpccases.Code {
	t.Helper()
	select {
	case code := <-c.served:
		return code
	case <-t.Context().Done():
		t.Fatal("the server answered no call")
		return 0
	}
}

type casesStream struct {
	s   *connect.ServerStreamForClient[wrapperspb.StringValue]
	err error
}

func (s *casesStream) Recv() (string, *rpccases.Result) {
	switch {
	case s.err != nil:
		r := result(s.err)
		return "", &r
	case s.s.Receive():
		return s.s.Msg().GetValue(), nil
	case s.s.Err() != nil:
		r := result(s.s.Err())
		_ = s.s.Close()
		return "", &r
	}
	_ = s.s.Close()
	return "", &rpccases.Result{}
}
