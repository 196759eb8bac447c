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
