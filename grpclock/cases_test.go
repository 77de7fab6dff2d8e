package grpclock_test

import (
	"context"
	"errors"
	"io"
	"testing"

	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/reqlock/reqlock/grpclock"
	"github.com/reqlock/reqlock/internal/rpccases"
)

// TestCases runs the RPC adapters' shared cases on a real gRPC server on
// loopback, on the memory store and on Redis.
func TestCases(t *testing.T) { rpccases.Run(t, adapter) }

var adapter = rpccases.Adapter{Name: "grpc", Serve: serveCases}

// echo is the cases' service, described by hand: its messages are
// StringValue both ways, so it needs no generated code.
func echo(h rpccases.Handlers) *grpc.ServiceDesc {
	unary := h.Unary
	if unary == nil {
		unary = func(context.Context, string) (string, error) { return "ok", nil }
	}
	stream := h.Stream
	if stream == nil {
		stream = func(_ context.Context, _ string, send func(string) error) error { return send("ok") }
	}
	return &grpc.ServiceDesc{
		ServiceName: rpccases.Service,
		HandlerType: (*any)(nil),
		Methods: []grpc.MethodDesc{{
			MethodName: "Say",
			Handler: func(srv any, ctx context.Context, dec func(any) error, icpt grpc.UnaryServerInterceptor) (any, error) {
				in := new(wrapperspb.StringValue)
				if err := dec(in); err != nil {
					return nil, err
				}
				run := func(ctx context.Context, req any) (any, error) {
					out, err := unary(ctx, req.(*wrapperspb.StringValue).GetValue())
					if err != nil {
						return nil, err
					}
					return wrapperspb.String(out), nil
				}
				return icpt(ctx, in, &grpc.UnaryServerInfo{Server: srv, FullMethod: rpccases.UnaryMethod}, run)
			},
		}},
		Streams: []grpc.StreamDesc{{
			StreamName:    "Watch",
			ServerStreams: true,
			Handler: func(_ any, ss grpc.ServerStream) error {
				in := new(wrapperspb.StringValue)
				if err := ss.RecvMsg(in); err != nil {
					return err
				}
				return stream(ss.Context(), in.GetValue(), func(s string) error { return ss.SendMsg(wrapperspb.String(s)) })
			},
		}},
	}
}

func serveCases(t testing.TB, c rpccases.Config, h rpccases.Handlers) rpccases.Client {
	t.Helper()
	cfg := c.HTTPLock()
	cl := &casesClient{served: make(chan rpccases.Code, 100)}
	served := func(err error) {
		select {
		case cl.served <- rpccases.Code(status.Code(err)):
		default:
		}
	}
	auth := func(ctx context.Context) context.Context {
		if h.Arrived != nil {
			defer h.Arrived()
		}
		md, _ := metadata.FromIncomingContext(ctx)
		if u := md.Get(rpccases.UserHeaderName); len(u) == 1 {
			return context.WithValue(ctx, rpccases.UserKey{}, u[0])
		}
		return ctx
	}
	var opts []grpc.ServerOption
	if c.Traced != nil {
		opts = append(opts, grpc.StatsHandler(otelgrpc.NewServerHandler(otelgrpc.WithTracerProvider(c.Traced))))
	}
	srv := grpc.NewServer(append(opts,
		grpc.ChainUnaryInterceptor(
			func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
				resp, err := next(ctx, req)
				served(err)
				return resp, err
			},
			recoverUnary,
			func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
				return next(auth(ctx), req)
			},
			grpclock.UnaryServerInterceptor(cfg)),
		grpc.ChainStreamInterceptor(
			func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, next grpc.StreamHandler) error {
				err := next(srv, ss)
				served(err)
				return err
			},
			func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, next grpc.StreamHandler) error {
				return next(srv, authedStream{ss, auth(ss.Context())})
			},
			grpclock.StreamServerInterceptor(cfg)))...)
	srv.RegisterService(echo(h), nil)
	conn := listen(t, srv)
	cl.conn = conn
	return cl
}

type authedStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s authedStream) Context() context.Context { return s.ctx }

type casesClient struct {
	conn   *grpc.ClientConn
	served chan rpccases.Code
}

// outgoing is ctx with c's metadata.
func outgoing(ctx context.Context, c rpccases.Call) context.Context {
	for _, k := range c.Keys {
		ctx = metadata.AppendToOutgoingContext(ctx, rpccases.KeyHeaderName, k)
	}
	if c.User != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, rpccases.UserHeaderName, c.User)
	}
	return ctx
}

func result(err error) rpccases.Result {
	st := status.Convert(err)
	r := rpccases.Result{Code: rpccases.Code(st.Code()), Message: st.Message()}
	if ri := retryInfo(st); ri != nil {
		r.RetryDelay = ri.GetRetryDelay().AsDuration()
	}
	return r
}

func (c *casesClient) Unary(ctx context.Context, call rpccases.Call) rpccases.Result {
	var header metadata.MD
	out := new(wrapperspb.StringValue)
	err := c.conn.Invoke(outgoing(ctx, call), rpccases.UnaryMethod, wrapperspb.String(call.Text), out, grpc.Header(&header))
	if err != nil {
		return result(err)
	}
	replayed := header.Get(grpclock.HeaderReplayed)
	return rpccases.Result{Text: out.GetValue(), Replayed: len(replayed) == 1 && replayed[0] == "true"}
}

func (c *casesClient) Stream(ctx context.Context, call rpccases.Call) rpccases.Stream {
	desc := &grpc.StreamDesc{StreamName: "Watch", ServerStreams: true}
	s, err := c.conn.NewStream(outgoing(ctx, call), desc, rpccases.StreamMethod)
	if err == nil {
		err = s.SendMsg(wrapperspb.String(call.Text))
	}
	if err == nil {
		err = s.CloseSend()
	}
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
	s   grpc.ClientStream
	err error
}

func (s *casesStream) Recv() (string, *rpccases.Result) {
	if s.err != nil {
		r := result(s.err)
		return "", &r
	}
	m := new(wrapperspb.StringValue)
	if err := s.s.RecvMsg(m); err != nil {
		r := rpccases.Result{}
		if !errors.Is(err, io.EOF) {
			r = result(err)
		}
		return "", &r
	}
	return m.GetValue(), nil
}

var _ = codes.OK
