// Command otel is the one place that shows reqlock's telemetry wired to an
// OpenTelemetry Collector: OTLP over HTTP for metrics and traces, otelhttp
// for the request spans that reqlock's spans and events hang under.
//
// It is a module of its own so that the exporters it needs never become
// requirements of the reqlock module itself, which uses the OpenTelemetry
// API only.
//
//	OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 go run .
//	curl -X POST -H 'Authorization: Bearer alice' -H 'Idempotency-Key: "k1"' http://127.0.0.1:8080/orders
package main

import (
	"context"
	"errors"
	"log"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/examples/internal/storeenv"
	"github.com/reqlock/reqlock/httplock"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context) error {
	shutdown, err := setupTelemetry(ctx)
	if err != nil {
		return err
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := shutdown(ctx); err != nil {
			log.Print(err)
		}
	}()

	store, which, closeStore, err := storeenv.Open()
	if err != nil {
		return err
	}
	defer closeStore()

	// One Telemetry value for both: nil providers mean the global ones,
	// which setupTelemetry has just installed.
	locker := core.NewLocker(store,
		core.WithTelemetry(core.Telemetry{}),
		core.WithHolder(hostname()))
	oneAtATime := httplock.New(httplock.Config{
		Locker:    locker,
		Key:       httplock.Join(httplock.FromContext(userKey{}), httplock.IdempotencyKey()),
		Telemetry: &core.Telemetry{},
	})

	mux := http.NewServeMux()
	mux.Handle("POST /orders", oneAtATime(http.HandlerFunc(createOrder)))
	// otelhttp outside auth and reqlock: the request span exists before
	// reqlock looks at the request, so reqlock's spans are its children.
	srv := &http.Server{Addr: "127.0.0.1:8080", Handler: otelhttp.NewHandler(auth(mux), "orders")}
	go func() {
		<-ctx.Done()
		_ = srv.Shutdown(context.Background())
	}()
	log.Printf("listening on 127.0.0.1:8080 (%s), exporting to %s", which, endpoint())
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// setupTelemetry installs global meter and tracer providers that export by
// OTLP over HTTP; the exporters read OTEL_EXPORTER_OTLP_ENDPOINT and the
// other standard variables.
func setupTelemetry(ctx context.Context) (shutdown func(context.Context) error, err error) {
	metricExp, err := otlpmetrichttp.New(ctx)
	if err != nil {
		return nil, err
	}
	traceExp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, err
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(
		sdkmetric.NewPeriodicReader(metricExp, sdkmetric.WithInterval(10*time.Second))))
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(traceExp))
	otel.SetMeterProvider(mp)
	otel.SetTracerProvider(tp)
	return func(ctx context.Context) error {
		return errors.Join(tp.Shutdown(ctx), mp.Shutdown(ctx))
	}, nil
}

func endpoint() string {
	if e := os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT"); e != "" {
		return e
	}
	return "http://localhost:4318 (the OTLP default)"
}

func hostname() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "unknown"
	}
	return h
}

type userKey struct{}

// auth stands in for real authentication: it must verify the credential
// before it trusts the user it names.
func auth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || user == "" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), userKey{}, user)))
	})
}

func createOrder(w http.ResponseWriter, _ *http.Request) {
	time.Sleep(200 * time.Millisecond) // charge the card, write the order
	w.WriteHeader(http.StatusCreated)
	_, _ = w.Write([]byte("order created\n"))
}
