package websocket

import (
	"errors"

	"github.com/galeio/gale/engine"
)

// NewEngine returns a started engine that serves WebSocket connections
// (those given to Upgrader.Upgrade by net/http, and dialed ones), for
// Options.Engine: with its own options (loops, backend, MaxWriteBuffer,
// timeouts). Stop it with its Shutdown or Stop when done.
func NewEngine(o engine.Options) (*engine.Engine, error) {
	return nil, errors.ErrUnsupported
}
