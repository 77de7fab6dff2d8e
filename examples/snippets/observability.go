package snippets

import (
	"net/http"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
)

// Telemetry is docs/observability.md's wiring: metrics and spans for the
// Locker and for one middleware, through the global OpenTelemetry providers.
func Telemetry(store core.Store, hostname string) func(http.Handler) http.Handler {
	tel := core.Telemetry{} // nil providers: otel.GetMeterProvider(), otel.GetTracerProvider()
	locker := core.NewLocker(store, core.WithTelemetry(tel), core.WithHolder(hostname))
	return httplock.New(httplock.Config{Locker: locker, Key: httplock.FromContext(userKey{}), Telemetry: &tel})
}
