package frameworks

import (
	"io"
	"net/http"
	"sync"

	"github.com/gin-gonic/gin"
	"go.opentelemetry.io/contrib/instrumentation/github.com/gin-gonic/gin/otelgin"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"

	"github.com/reqlock/reqlock/ginlock"
	"github.com/reqlock/reqlock/internal/httpcases"
)

// Gin serves the routes on a gin.Engine with recovery and a stand-in auth
// middleware in front, as an app would; traced, under otelgin.
var Gin = httpcases.Framework{Name: "gin", Handler: ginHandler}

// ginKeys are ginlock's.
var ginKeys = httpcases.Extractors{FromContext: ginlock.FromContext, FromParam: ginlock.FromParam}

var ginRelease sync.Once

func ginHandler(tp trace.TracerProvider, routes []httpcases.Route) http.Handler {
	ginRelease.Do(func() { gin.SetMode(gin.ReleaseMode) })
	r := gin.New()
	if tp != nil {
		r.Use(otelgin.Middleware("server", otelgin.WithTracerProvider(tp), otelgin.WithMeterProvider(metricnoop.NewMeterProvider())))
	}
	r.Use(gin.CustomRecoveryWithWriter(io.Discard, func(c *gin.Context, _ any) {
		c.Header(httpcases.RecoveredHeader, "1")
		c.AbortWithStatus(http.StatusInternalServerError)
	}), GinAuth)
	for _, rt := range routes {
		r.Handle(rt.Method, httpcases.ColonPath(rt.Path), ginlock.New(lockConfig(rt, ginKeys)), gin.WrapH(rt.Handler))
	}
	return r
}

// GinAuth stands in for auth and timeout middleware on Gin.
func GinAuth(c *gin.Context) {
	if u := c.GetHeader(httpcases.UserHeader); u != "" {
		c.Set(httpcases.UserKey, u)
		c.Set(httpcases.AccountKey, httpcases.Account{User: u})
	}
	r, cancel := httpcases.WithDeadline(c.Request)
	defer cancel()
	c.Request = r
	c.Next()
}
