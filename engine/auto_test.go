package engine_test

import (
	"testing"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/testkit/backendtest"
)

// TestAutoBackend checks package backend's table for engine: Auto opens
// io_uring for callbacks that run on the loop, where io_uring opens.
func TestAutoBackend(t *testing.T) {
	want := backendtest.Auto(t, true)
	e, err := engine.New(engine.BaseHandler{}, engine.Options{Loops: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Stop()
	if got := e.Stats().Loops[0].Backend; got != want {
		t.Fatalf("Auto opened %v for an engine; package backend's table says %v", got, want)
	}
}
