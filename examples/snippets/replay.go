package snippets

import (
	"crypto/sha256"
	"net/http"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
)

// ReplayOptions is docs/replay.md's ReplayConfig, every field at its default
// but for the fingerprint, which here ignores the query string.
func ReplayOptions(locker *core.Locker) func(http.Handler) http.Handler {
	payOnce := httplock.New(httplock.Config{
		Locker:      locker,
		Key:         httplock.Join(httplock.FromContext(userKey{}), httplock.IdempotencyKey()),
		KeyRequired: true,
		Mode:        httplock.Wait, // a retry that arrives mid-flight waits, then gets the replay
		Replay: &httplock.ReplayConfig{
			Retention:       24 * time.Hour,                  // how long a response is replayed
			RecordStatus:    httplock.DefaultRecordStatus,    // all but 5xx, 408, 425 and 429
			Headers:         httplock.DefaultReplayHeaders(), // never Set-Cookie
			MaxResponseBody: 1 << 20,                         // longer: sent, not recorded
			MaxRequestBody:  1 << 20,                         // longer: 413
			Fingerprint: func(r *http.Request, body []byte) []byte {
				b := sha256.Sum256(body) // the parts length-prefixed: no two requests join alike
				f := sha256.Sum256([]byte(httplock.JoinKeys(r.Method, r.URL.Path, string(b[:]))))
				return f[:]
			},
			InDoubt: core.RunAgain, // after a run that lost its lock without a record; or core.RefuseInDoubt
		},
	})
	return payOnce
}
