package frameworks

import (
	"net/http"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"

	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/internal/httpcases"
)

// NetHTTP serves each route on a ServeMux pattern, its handler wrapped by
// the middleware, as the docs tell users to; traced, under otelhttp.
var NetHTTP = httpcases.Framework{Name: "net/http", Handler: netHTTP}

// netHTTPKeys are net/http's: context values under httpcases.ValueKey.
var netHTTPKeys = httpcases.Extractors{
	FromContext: func(name string) httplock.KeyFunc { return httplock.FromContext(httpcases.ValueKey(name)) },
	FromParam:   httplock.FromPathValue,
}

func netHTTP(tp trace.TracerProvider, routes []httpcases.Route) http.Handler {
	mux := http.NewServeMux()
	for _, rt := range routes {
		mux.Handle(rt.Method+" "+rt.Path, httplock.New(lockConfig(rt, netHTTPKeys))(rt.Handler))
	}
	h := httpcases.Recover(httpcases.WithUser(mux))
	if tp != nil {
		h = otelhttp.NewHandler(h, "server", otelhttp.WithTracerProvider(tp), otelhttp.WithMeterProvider(metricnoop.NewMeterProvider()))
	}
	return h
}
