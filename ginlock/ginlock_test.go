package ginlock_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/ginlock"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/memorystore"
)

func serve(h http.Handler, method, url string, hdr ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, url, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestLockReachableFromContext(t *testing.T) {
	l := core.NewLocker(memorystore.New())
	want := httplock.LockKey("POST /orders/:id", "42")
	var outer context.Context
	r := gin.New()
	r.POST("/orders/:id",
		func(c *gin.Context) {
			c.Next()
			outer = c.Request.Context() // restored once the chain returns
		},
		ginlock.New(httplock.Config{Locker: l, Key: ginlock.FromParam("id")}),
		func(c *gin.Context) {
			a, okA := ginlock.LockFrom(c)
			b, okB := core.FromContext(c.Request.Context())
			if !okA || !okB || a != b || a.Key() != want {
				c.Status(http.StatusInternalServerError)
				return
			}
			c.Status(http.StatusOK)
		})
	if w := serve(r, "POST", "/orders/42"); w.Code != http.StatusOK {
		t.Fatalf("got %d", w.Code)
	}
	if _, ok := core.FromContext(outer); ok {
		t.Fatal("the lock's context leaked out of the middleware")
	}
}

func TestRejectionAbortsChain(t *testing.T) {
	l := core.NewLocker(memorystore.New())
	var reason error
	r := gin.New()
	r.POST("/orders", ginlock.New(httplock.Config{
		Locker: l, Key: httplock.FromHeader("X-Key"), KeyRequired: true,
		Respond: func(w http.ResponseWriter, r *http.Request, rej *httplock.Rejection) {
			c, _ := ginlock.ContextOf(r)
			reason = rej.Reason
			c.String(http.StatusPreconditionRequired, "send X-Key")
		},
	}), func(c *gin.Context) { t.Error("handler ran after a rejection") })
	if w := serve(r, "POST", "/orders"); w.Code != http.StatusPreconditionRequired || !errors.Is(reason, httplock.ErrKeyMissing) {
		t.Fatalf("got %d, reason %v", w.Code, reason)
	}
}

func TestDefaultRespondWritesProblem(t *testing.T) {
	l := core.NewLocker(memorystore.New())
	lk, _ := l.TryObtain(context.Background(), httplock.LockKey("POST /orders", "alice"))
	defer lk.Release(context.Background())
	r := gin.New()
	r.POST("/orders", ginlock.New(httplock.Config{Locker: l, Key: httplock.FromHeader("X-User")}), func(c *gin.Context) {
		t.Error("handler ran while the key was held")
	})
	w := serve(r, "POST", "/orders", "X-User", "alice")
	if w.Code != http.StatusConflict || w.Header().Get("Retry-After") != "1" || w.Header().Get("Content-Type") != httplock.ContentTypeProblem {
		t.Fatalf("got %d %v", w.Code, w.Header())
	}
}

func TestKeyComposition(t *testing.T) {
	c, _ := gin.CreateTestContext(httptest.NewRecorder())
	c.Request = httptest.NewRequest("POST", "/?order=7", nil)
	c.Set("user", 42)
	if k, err := httplock.Join(ginlock.FromContext("user"), httplock.FromQuery("order"))(ginlock.Carrying(c)); k != "2:421:7" || err != nil {
		t.Fatalf("Join: %q, %v", k, err)
	}
	if k, err := httplock.FirstOf(httplock.IdempotencyKey(), ginlock.FromContext("user"))(ginlock.Carrying(c)); k != "42" || err != nil {
		t.Fatalf("FirstOf: %q, %v", k, err)
	}
}
