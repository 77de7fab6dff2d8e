package ginlock

import (
	"net/http"

	"github.com/gin-gonic/gin"
)

// Carrying is c.Request as the middleware hands it to Config.Key.
func Carrying(c *gin.Context) *http.Request { return ginContext.With(c.Request, c) }
