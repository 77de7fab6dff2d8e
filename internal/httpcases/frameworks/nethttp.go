package frameworks

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"

	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/internal/httpcases"
)

// NetHTTP serves each route on a ServeMux pattern, its handler wrapped by
// the middleware, as the docs tell users to; traced, under otelhttp.
var NetHTTP = httpcases.Framework{
	Name: "net/http",
	Serve: func(t *testing.T, routes []httpcases.Route) string {
		return serveMux(t, nil, routes)
	},
	ServeTraced: serveMux,
}

func serveMux(t *testing.T, tp trace.TracerProvider, routes []httpcases.Route) string {
	mux := http.NewServeMux()
	for _, rt := range routes {
		cfg := rt.Lock
		cfg.Key = httpKey(rt.Key)
		mux.Handle(rt.Method+" "+rt.Path, httplock.New(cfg)(rt.Handler))
	}
	h := httpcases.Recover(httpcases.WithUser(mux))
	if tp != nil {
		h = otelhttp.NewHandler(h, "server", otelhttp.WithTracerProvider(tp), otelhttp.WithMeterProvider(metricnoop.NewMeterProvider()))
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

func httpKey(k httpcases.KeySource) httplock.KeyFunc {
	switch k.Kind {
	case httpcases.FromHeader:
		return httplock.FromHeader(k.Name)
	case httpcases.FromParam:
		return httplock.FromPathValue(k.Name)
	case httpcases.FromQuery:
		return httplock.FromQuery(k.Name)
	case httpcases.FromIdempotencyKey:
		return httplock.IdempotencyKey()
	case httpcases.FromValue:
		return httplock.FromContext(httpcases.ValueKey(k.Name))
	case httpcases.FromUserAndIdempotencyKey:
		return httplock.Join(httplock.FromContext(httpcases.UserCtxKey{}), httplock.IdempotencyKey())
	}
	return httplock.FromContext(httpcases.UserCtxKey{})
}
