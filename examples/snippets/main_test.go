package snippets

import (
	"testing"

	"github.com/gin-gonic/gin"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	gin.SetMode(gin.TestMode) // no debug banner per route
	goleak.VerifyTestMain(m)
}
