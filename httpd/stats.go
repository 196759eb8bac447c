package httpd

import (
	"net/http"
	"sync/atomic"

	"github.com/galeio/gale/engine"
)

// Stats are a Server's counters, for the connections its loops serve.
type Stats struct {
	// Engine is the loops' counters: connections, bytes, and the
	// connections a limit closed (Engine.Total().Limits).
	Engine engine.Stats
	// Handlers is the number of handlers running, as MaxHandlers counts
	// them.
	Handlers int
	// Refused counts the requests the server answered itself, before any
	// handler, by status: 400 (a malformed head), 417 (an Expect it
	// cannot meet), 431 (MaxHeaderBytes, MaxHeaderValueCount), 501 (an
	// unknown transfer coding), 503 (MaxHandlers), 505 (the version).
	Refused map[int]uint64
	// Requests counts the requests handed to a handler, by protocol.
	Requests RequestStats
	// Pool describes the handlers' goroutines.
	Pool PoolStats
	// Conns counts the open connections, by state.
	Conns ConnStats
}

// refusedStatuses are the statuses Stats.Refused counts, in
// refusals' order.
var refusedStatuses = [...]int{
	http.StatusBadRequest,
	http.StatusExpectationFailed,
	http.StatusRequestHeaderFieldsTooLarge,
	http.StatusNotImplemented,
	http.StatusServiceUnavailable,
	http.StatusHTTPVersionNotSupported,
}

// refusals counts the requests a Server refused, by status.
type refusals [len(refusedStatuses)]atomic.Uint64

// count counts a refusal with status.
func (r *refusals) count(status int) {
	for i, st := range refusedStatuses {
		if st == status {
			r[i].Add(1)
			return
		}
	}
	r[0].Add(1) // any other 4xx the parser's checks give: a bad request
}

// Stats returns a snapshot of the counters; each is read atomically, the
// set as a whole is not. Before Serve it returns zeros.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	e, p := s.eng, s.pool
	s.mu.Unlock()
	st := Stats{Refused: make(map[int]uint64, len(refusedStatuses))}
	for i, status := range refusedStatuses {
		st.Refused[status] = s.refused[i].Load()
	}
	st.Conns = ConnStats{Open: int(s.open.Load()), Upgraded: int(s.upgrades.Load())}
	if e != nil {
		st.Engine = e.Stats()
		st.Pool, st.Requests = p.stats()
		st.Handlers = st.Pool.Busy
	}
	return st
}
