package httplock

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// Problem is an RFC 9457 problem details object, the body of every response
// the middleware writes itself.
type Problem struct {
	// Type is "about:blank": the status code says what happened.
	Type string `json:"type"`
	// Title is the status code's reason phrase, as RFC 9457 asks for
	// "about:blank".
	Title string `json:"title"`
	// Status repeats the HTTP status code.
	Status int `json:"status"`
	// Detail explains this occurrence to a person.
	Detail string `json:"detail,omitempty"`
	// Code is an extension member with a stable, machine-readable reason
	// ("locked", "limit_reached", "too_many_waiters", …): several 400s,
	// 409s and 429s would otherwise look the same to a client.
	Code string `json:"code,omitempty"`
}

// WriteProblem is the default response for a Rejection: the status,
// Retry-After when set, Cache-Control: no-store (a 409 is about this moment)
// and the Problem as application/problem+json. For ErrClientGone it writes
// nothing, since nobody is listening.
func WriteProblem(w http.ResponseWriter, r *http.Request, rej *Rejection) {
	if rej.Clientless() {
		return
	}
	h := w.Header()
	rej.SetHeaders(h)
	h.Set("Content-Type", ContentTypeProblem)
	h.Set("X-Content-Type-Options", "nosniff")
	body, err := json.Marshal(rej.Problem)
	if err != nil { // a Problem is strings and an int: cannot happen
		body = []byte(`{"type":"about:blank","status":` + strconv.Itoa(rej.Status) + `}`)
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(rej.Status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}
