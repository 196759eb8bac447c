package websocket_test

import (
	"errors"
	"testing"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/websocket"
)

// TestNewEnginePoolRefused: NewEngine refuses engine options with a Pool
// (frames are read on the loops; websocket's Options.Pool takes the
// callbacks) with an error matching errors.ErrUnsupported.
func TestNewEnginePoolRefused(t *testing.T) {
	p := engine.NewPool(engine.PoolOptions{})
	defer p.Close()
	e, err := websocket.NewEngine(engine.Options{Pool: p})
	if !errors.Is(err, errors.ErrUnsupported) {
		if e != nil {
			e.Stop()
		}
		t.Fatalf("NewEngine with a Pool = %v, want errors.ErrUnsupported", err)
	}
}
