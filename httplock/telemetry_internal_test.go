package httplock

import "testing"

func TestScopeAttr(t *testing.T) {
	def := &telemetry{}
	for scope, want := range map[string]string{
		"POST /orders/{id}":  "POST /orders/{id}",
		"GET":                "GET",
		"OPTIONS /":          "OPTIONS /",
		"get /orders/{id}":   "_OTHER /orders/{id}", // methods are case-sensitive
		"PROPFIND /dav/{p}":  "_OTHER /dav/{p}",
		"X1234":              "_OTHER",
		"":                   "_OTHER",
		"BREW /pot/{id} x y": "_OTHER /pot/{id} x y",
		"/pkg.Orders/Create": "/pkg.Orders/Create", // an RPC's method: the gRPC and Connect adapters' scope
		"/a b":               "_OTHER b",
	} {
		if got := def.scopeAttr(scope); got != want {
			t.Errorf("default scope %q: attribute %q, want %q", scope, got, want)
		}
	}
	custom := &telemetry{custom: true}
	if got := custom.scopeAttr("payments"); got != "payments" {
		t.Errorf("Config.Scope: attribute %q, want it as given", got)
	}
}
