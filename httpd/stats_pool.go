package httpd

// RequestStats count the requests handed to a handler on loop-served
// connections, by protocol. (Those a net/http goroutine serves, in
// ModeGoroutine and below ModeMixed's threshold, are not counted.)
type RequestStats struct {
	HTTP1 uint64 // HTTP/1.0 and HTTP/1.1 requests
	HTTP2 uint64 // HTTP/2 streams, h2c included
}

// PoolStats describe the goroutines that run handlers for loop-served
// connections. A request never waits for one: when Max handlers run it
// is refused (Stats.Refused[503]), so there is no queue to measure.
type PoolStats struct {
	// Busy is the number of handlers running, as MaxHandlers counts
	// them (Stats.Handlers).
	Busy int
	// Idle is the number of goroutines kept for the next requests.
	Idle int
	// Max is Server.MaxHandlers: 0 for no bound.
	Max int
}

// ConnStats count a Server's open connections by state, as far as it
// tracks them without a walk: Open counts every connection (on loops and
// on net/http's goroutines), Upgraded those switched to another protocol
// on their loop (Upgrade) and not yet closed. Idle and active connections
// are not told apart: that takes a walk of the list under the Server's
// lock.
type ConnStats struct {
	Open     int
	Upgraded int
}

// protoIndex is the index in pool.started of ex's protocol.
func protoIndex(ex job) int {
	if _, ok := ex.(*h2stream); ok {
		return 1
	}
	return 0
}

// stats returns p's figures, read under its lock.
func (p *pool) stats() (PoolStats, RequestStats) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return PoolStats{Busy: p.busy, Idle: len(p.idle), Max: p.max},
		RequestStats{HTTP1: p.started[0], HTTP2: p.started[1]}
}
