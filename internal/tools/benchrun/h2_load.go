package benchrun

import "time"

// h2Load drives an HTTP/2 server with h2load for o.Duration over c.Conns
// h2c connections, each keeping c.Streams GETs of HelloPath in flight.
// The figure is h2load's requests per second; the messages, over which
// the server's CPU is divided, are every response h2load received, those
// that came after the duration included (the server did that work too).
// The client CPU is h2load's; there is no latency percentile (h2load
// prints none). checkH2 has checked the answers before.
func h2Load(ch *Child, c Case, o Options) (result, error) {
	job := h2loadJob{url: "http://" + ch.Addr() + HelloPath, conns: c.Conns, streams: c.Streams, d: o.Duration}
	h, err := job.run()
	if err != nil {
		return result{}, err
	}
	return result{
		msgs:      h.responses,
		bytes:     h.responses * int64(c.Size),
		elapsed:   time.Duration(float64(h.done) / h.rps * float64(time.Second)),
		clientCPU: h.cpu,
		value:     h.rps,
	}, nil
}
