package ginlock_test

import (
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/reqlock/reqlock/internal/httpcases"
)

func TestMain(m *testing.M) {
	gin.SetMode(gin.TestMode)
	httpcases.VerifyTestMain(m)
}
