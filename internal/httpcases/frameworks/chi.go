package frameworks

import (
	"net/http"

	"github.com/go-chi/chi/v5"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"

	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/internal/httpcases"
)

// Chi serves each route on a chi router with httplock's middleware in
// r.With, where chi has routed the request and set r.Pattern and its path
// values; recovery and the stand-in auth are router-wide (r.Use). Traced,
// under otelhttp.
var Chi = httpcases.Framework{Name: "chi", Handler: chiHandler}

func chiHandler(tp trace.TracerProvider, routes []httpcases.Route) http.Handler {
	r := chi.NewRouter()
	r.Use(httpcases.Recover, httpcases.WithUser)
	for _, rt := range routes {
		r.With(httplock.New(lockConfig(rt, netHTTPKeys))).Method(rt.Method, rt.Path, rt.Handler)
	}
	if tp != nil {
		return otelhttp.NewHandler(r, "server", otelhttp.WithTracerProvider(tp), otelhttp.WithMeterProvider(metricnoop.NewMeterProvider()))
	}
	return r
}
