package ginlock_test

import (
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/reqlock/reqlock/ginlock"
)

func testContext() *gin.Context {
	c, _ := gin.CreateTestContext(httptest.NewRecorder())
	c.Request = httptest.NewRequest("POST", "/", nil)
	return c
}

func FuzzFromParam(f *testing.F) {
	for _, s := range []string{"", "42", "a/b", "{id}", "\xff"} {
		f.Add(s)
	}
	fn := ginlock.FromParam("id")
	f.Fuzz(func(t *testing.T, v string) {
		c := testContext()
		c.Params = gin.Params{{Key: "id", Value: v}}
		if k, err := fn(ginlock.Carrying(c)); k != v || err != nil {
			t.Fatalf("FromParam = %q, %v; want %q", k, err, v)
		}
	})
}

func FuzzFromContext(f *testing.F) {
	for _, s := range []string{"", "alice", "\x00"} {
		f.Add(s)
	}
	fn := ginlock.FromContext("user")
	f.Fuzz(func(t *testing.T, v string) {
		c := testContext()
		c.Set("user", v)
		if k, err := fn(ginlock.Carrying(c)); k != v || err != nil {
			t.Fatalf("FromContext = %q, %v; want %q", k, err, v)
		}
	})
}
