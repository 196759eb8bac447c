package httpd_test

import (
	"errors"
	"net"
	"testing"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/httpd"
)

// TestEnginePoolRefused: a Server whose Engine options set a Pool is
// refused with an error matching errors.ErrUnsupported (its heads and
// bodies are read on the loops; handlers have goroutines of their own).
func TestEnginePoolRefused(t *testing.T) {
	p := engine.NewPool(engine.PoolOptions{})
	defer p.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	s := &httpd.Server{Engine: engine.Options{Pool: p}}
	if err := s.Serve(ln); !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("Serve with Engine.Pool = %v, want errors.ErrUnsupported", err)
	}
}
