package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/reqlock/reqlock/core"
)

// httpTelemetry is what the demo's middlewares record through: nil unless
// -metrics asked for it.
var httpTelemetry *core.Telemetry

// meter collects reqlock's metrics in memory, for printing at the end. A
// real service exports them instead (see examples/otel).
type meter struct {
	reader   *sdkmetric.ManualReader
	provider *sdkmetric.MeterProvider
}

func newMeter() *meter {
	r := sdkmetric.NewManualReader()
	return &meter{reader: r, provider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(r))}
}

// telemetry is metrics only: the demo has no trace backend to show spans in.
func (m *meter) telemetry() *core.Telemetry {
	return &core.Telemetry{MeterProvider: m.provider, TracerProvider: tracenoop.NewTracerProvider()}
}

// print writes one line per reqlock metric stream: its name, attributes and
// value (a sum, or a histogram's count and mean).
func (m *meter) print(ctx context.Context, w io.Writer) error {
	var rm metricdata.ResourceMetrics
	if err := m.reader.Collect(ctx, &rm); err != nil {
		return err
	}
	var lines [][3]string
	for _, sm := range rm.ScopeMetrics {
		for _, mt := range sm.Metrics {
			if !strings.HasPrefix(mt.Name, "reqlock.") {
				continue
			}
			for attrs, value := range points(mt.Data) {
				lines = append(lines, [3]string{mt.Name, attrs, value})
			}
		}
	}
	sort.Slice(lines, func(i, j int) bool {
		if lines[i][0] != lines[j][0] {
			return lines[i][0] < lines[j][0]
		}
		return lines[i][1] < lines[j][1]
	})
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "metric\tattributes\tvalue")
	for _, l := range lines {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", l[0], l[1], l[2])
	}
	return tw.Flush()
}

// points yields each data point of d as (attributes, value).
func points(d metricdata.Aggregation) func(yield func(string, string) bool) {
	return func(yield func(string, string) bool) {
		switch d := d.(type) {
		case metricdata.Sum[int64]:
			for _, p := range d.DataPoints {
				if !yield(attrString(p.Attributes), fmt.Sprint(p.Value)) {
					return
				}
			}
		case metricdata.Sum[float64]:
			for _, p := range d.DataPoints {
				if !yield(attrString(p.Attributes), fmt.Sprintf("%.3g", p.Value)) {
					return
				}
			}
		case metricdata.Histogram[float64]:
			for _, p := range d.DataPoints {
				mean := 0.0
				if p.Count > 0 {
					mean = p.Sum / float64(p.Count)
				}
				if !yield(attrString(p.Attributes), fmt.Sprintf("count %d, mean %v", p.Count, seconds(mean))) {
					return
				}
			}
		}
	}
}

// seconds rounds a duration in seconds, as OpenTelemetry records them, for
// reading.
func seconds(s float64) time.Duration {
	d := time.Duration(s * float64(time.Second))
	if d >= time.Millisecond {
		return d.Round(100 * time.Microsecond)
	}
	return d.Round(time.Microsecond)
}

func attrString(s attribute.Set) string {
	var b strings.Builder
	for i, kv := range s.ToSlice() {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s=%s", strings.TrimPrefix(string(kv.Key), "reqlock."), kv.Value.Emit())
	}
	return b.String()
}
