package http1

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
