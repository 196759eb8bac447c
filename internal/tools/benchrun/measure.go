package benchrun

import (
	"errors"
	"time"

	"github.com/galeio/gale/internal/tools/procfs"
)

// result is what one run of a scenario measured.
type result struct {
	value     float64       // the headline figure, in Case.Unit
	msgs      int64         // messages echoed (conns for idle)
	bytes     int64         // bytes echoed and verified; HTTP: body bytes sent or received
	elapsed   time.Duration // of the measured part
	serverCPU time.Duration // CPU the server process used during the run
	clientCPU time.Duration // CPU the load generator used (wrk's, set by the scenario, and this process's)
	serverRSS int64         // the server's peak resident set, bytes
	syscalls  int64         // the server's system calls, when counted
	ctxsw     int64         // the server's context switches, counted with syscalls
	lat       *histogram    // per-message latency, when measured
	p50, p99  float64       // latency µs from an outside client (wrk), when lat is nil
	tls       string        // what a TLS server's handshake chose
}

// scenarios drive the server ch for case c.
var scenarios = map[string]func(ch *Child, c Case, o Options) (result, error){
	"stream":        stream,
	"pingpong":      pingpong,
	"conns":         manyConns,
	"idle":          idle,
	"tls-stream":    stream,
	"tls-pingpong":  pingpong,
	"tls-handshake": handshakes,
	"tls-idle":      idle,
	"http-hello":    httpLoad,
	"http-64k":      httpLoad,
	"http-upload":   httpLoad,
	"http-idle":     idle,
	"h2-hello":      h2Load,
	"h2-idle":       idle,
}

// measure starts server s, drives it through case c and returns the
// record, with the server's and the client's CPU time and the server's
// peak memory. A failure is in Record.Err.
func measure(s Server, c Case, o Options) Record {
	rec := Record{Kind: "run", Time: time.Now().UTC().Truncate(time.Second), Case: c, Server: s.Name, Unit: c.Unit()}
	r, err := measureRun(s, c, o)
	if err != nil {
		rec.Err = err.Error()
		return rec
	}
	rec.Value, rec.Msgs, rec.Bytes = r.value, r.msgs, r.bytes
	rec.Seconds = r.elapsed.Seconds()
	rec.ServerCPU, rec.ClientCPU = r.serverCPU.Seconds(), r.clientCPU.Seconds()
	rec.PeakRSS, rec.Syscalls, rec.CtxSwitches = r.serverRSS, r.syscalls, r.ctxsw
	rec.TLS = r.tls
	rec.P50, rec.P99 = r.p50, r.p99
	if r.lat != nil {
		rec.P50, rec.P99, rec.P999 = r.lat.quantile(0.50), r.lat.quantile(0.99), r.lat.quantile(0.999)
	}
	return rec
}

func measureRun(s Server, c Case, o Options) (result, error) {
	ch, err := startServer(s, c, o)
	if err != nil {
		return result{}, err
	}
	var params string
	// Before the measurement, which these connections stay out of.
	switch c.kind() {
	case kindTLS:
		params, err = probeTLS(ch.Addr())
	case kindHTTP:
		err = checkHTTP(ch.Addr())
	case kindH2:
		err = checkH2(ch.Addr())
	}
	if err != nil {
		ch.Stop()
		return result{}, err
	}
	cpu0, err := ch.CPU()
	if err != nil {
		ch.Stop()
		return result{}, err
	}
	var sc *syscallCounter
	var sw0 int64
	if o.Syscalls {
		if sc, err = countSyscalls(ch.PID()); err != nil {
			ch.Stop()
			return result{}, err
		}
		sw0, _ = procfs.CtxSwitches(ch.PID())
	}
	self0 := procfs.SelfCPU()
	r, err := scenarios[c.Scenario](ch, c, o)
	var serr error
	if sc != nil {
		sw1, _ := procfs.CtxSwitches(ch.PID())
		r.ctxsw = sw1 - sw0
		r.syscalls, serr = sc.stop()
	}
	cpu1, cerr := ch.CPU()
	rss, rerr := procfs.PeakRSS(ch.PID())
	if err == nil {
		err = ch.atPeak() // not reached by the scenario: profile at the end
	} else {
		ch.dump() // a failing server shows where it stands
	}
	ch.Stop()
	if err = errors.Join(err, cerr, rerr, serr); err != nil {
		return result{}, err
	}
	r.serverCPU = cpu1 - cpu0
	r.clientCPU += procfs.SelfCPU() - self0
	r.serverRSS = rss
	r.tls = params
	return r, nil
}
