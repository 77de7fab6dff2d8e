package httpload

import (
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"strconv"

	"github.com/reqlock/reqlock/internal/httpcases"
)

// Shape checks that a response is one the documentation allows for a
// request that went through the middleware: 200 with the handler's body,
// 400 problem+json, or 409, 429 or 503 problem+json with a Retry-After of
// whole seconds, at least one. It returns nil or what is wrong.
func Shape(status int, h http.Header, body []byte) error {
	switch status {
	case http.StatusOK:
		if string(body) != RanBody {
			return fmt.Errorf("200 with body %q: not the handler's", clip(body))
		}
		return nil
	case http.StatusBadRequest, http.StatusConflict, http.StatusTooManyRequests, http.StatusServiceUnavailable:
	case http.StatusInternalServerError:
		if h.Get(httpcases.RecoveredHeader) != "" {
			return fmt.Errorf("500: a panic reached the recovery middleware")
		}
		return fmt.Errorf("500 %q", clip(body))
	default:
		return fmt.Errorf("undocumented status %d %q", status, clip(body))
	}
	if ct, _, _ := mime.ParseMediaType(h.Get("Content-Type")); ct != "application/problem+json" {
		return fmt.Errorf("%d with Content-Type %q, not problem+json", status, h.Get("Content-Type"))
	}
	var p struct {
		Status int    `json:"status"`
		Title  string `json:"title"`
	}
	if err := json.Unmarshal(body, &p); err != nil || p.Status != status {
		return fmt.Errorf("%d with problem body %q", status, clip(body))
	}
	if status == http.StatusBadRequest {
		return nil
	}
	ra := h.Values("Retry-After")
	if len(ra) != 1 {
		return fmt.Errorf("%d with %d Retry-After headers", status, len(ra))
	}
	if n, err := strconv.Atoi(ra[0]); err != nil || n < 1 {
		return fmt.Errorf("%d with Retry-After %q: want whole seconds ≥ 1", status, ra[0])
	}
	return nil
}

func clip(b []byte) string {
	if len(b) > 80 {
		return string(b[:80]) + "…"
	}
	return string(b)
}
