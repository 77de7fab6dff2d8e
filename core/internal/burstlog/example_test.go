package burstlog_test

import (
	"log/slog"
	"os"

	"github.com/reqlock/reqlock/core/internal/burstlog"
)

// The first line of a burst is logged at once; the rest are counted.
func ExampleLog() {
	lg := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{} // no time, for a stable output
			}
			return a
		},
	}))
	var b burstlog.Log
	for range 3 {
		b.Log(lg, slog.LevelWarn, "reqlock: lock store unavailable", "redis-main")
	}
	// Output:
	// level=WARN msg="reqlock: lock store unavailable" suppressed_since_last=0
}
