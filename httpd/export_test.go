package httpd

import (
	"time"

	"github.com/galeio/gale/engine"
)

// RunningHandlers returns the handlers counted against MaxHandlers.
func RunningHandlers(s *Server) int {
	s.mu.Lock()
	p := s.pool
	s.mu.Unlock()
	if p == nil {
		return 0
	}
	return p.running()
}

// RetireIdle runs a round of the pool's janitor, and returns the
// goroutines left idle.
func RetireIdle(s *Server) int {
	s.mu.Lock()
	p := s.pool
	s.mu.Unlock()
	p.retire()
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.idle)
}

// Engine returns the engine s serves its loop connections on, nil before
// the first Serve.
func Engine(s *Server) *engine.Engine {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.eng
}

// SetStreamCloseWait sets how long a closed event stream's queued events
// have to get out, and returns a function that restores it.
func SetStreamCloseWait(d time.Duration) (restore func()) {
	old := closeWait
	closeWait = d
	return func() { closeWait = old }
}

// PreparedBytes returns pe's encoding.
func PreparedBytes(pe *PreparedEvent) []byte { return pe.b }
