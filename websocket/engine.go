package websocket

import (
	"errors"
	"fmt"
	"sync"

	"github.com/galeio/gale/engine"
)

// NewEngine returns a started engine that serves WebSocket connections
// (those given to Upgrader.Upgrade by net/http, and dialed ones), for
// Options.Engine: with its own options (loops, backend, MaxWriteBuffer,
// timeouts). Stop it with its Shutdown or Stop when done; its connections
// then close with no close frame (close them first for a clean end).
//
// Its Options.Pool must be nil: the frames are read on the loops, and the
// Handler's callbacks go to websocket's Options.Pool instead.
func NewEngine(o engine.Options) (*engine.Engine, error) {
	if o.Pool != nil {
		return nil, fmt.Errorf("websocket: NewEngine with engine.Options.Pool (set websocket's Options.Pool instead): %w", errors.ErrUnsupported)
	}
	e, err := engine.New(engineHandler{}, o)
	if err != nil {
		return nil, err
	}
	if err := e.Start(); err != nil {
		return nil, err
	}
	return e, nil
}

// shared is the engine of Options that name none.
var shared struct {
	once sync.Once
	e    *engine.Engine
	err  error
}

// engineFor returns o's engine, or the shared one, started on first use.
func (o *Options) engineFor() (*engine.Engine, error) {
	if o.Engine != nil {
		return o.Engine, nil
	}
	shared.once.Do(func() { shared.e, shared.err = NewEngine(engine.Options{}) })
	return shared.e, shared.err
}
