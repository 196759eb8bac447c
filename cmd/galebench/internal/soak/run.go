package soak

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/galeio/gale/internal/tools/benchrun"
)

// runner is one soak in progress.
type runner struct {
	o       Options
	res     *Result
	sink    *sink
	start   time.Time
	targets []target
	procs   []*proc  // the servers, then the client
	harness []string // failures of the soak's own machinery
}

// Run soaks the chosen servers, all at once, each for the whole
// duration: a warm-up, the idle baseline, the load, and the end check.
// The Result's Failures say what went wrong; err is for a soak that
// could not run (an unknown server, one that did not start, an
// unwritable Out).
func Run(all []benchrun.Server, o Options) (*Result, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	servers, skipped, err := choose(all, o.Servers, o.Explicit)
	if err != nil {
		return nil, err
	}
	sk, err := openSink(o.Out)
	if err != nil {
		return nil, err
	}
	defer sk.close()
	res := &Result{Meta: newMeta(o, servers, skipped)}
	sk.add(res.Meta)
	children, err := startAll(servers)
	if err != nil {
		return nil, err
	}
	r := &runner{o: o, res: res, sink: sk}
	for i, s := range servers {
		tg := target{name: s.Name, addr: children[i].Addr(), t: newTally()}
		r.targets = append(r.targets, tg)
		r.procs = append(r.procs, serverProc(s, children[i], tg.t))
	}
	r.procs = append(r.procs, clientProc(r.targets))
	r.run()
	r.stopAll(children)
	r.finish()
	if o.Out != "" {
		if err := WriteReport(o.Out, res); err != nil {
			return res, err
		}
	}
	return res, sk.close()
}

// startAll starts a child per server; on a failure it stops those
// started.
func startAll(servers []benchrun.Server) ([]*benchrun.Child, error) {
	var children []*benchrun.Child
	for _, s := range servers {
		ch, err := benchrun.StartChild(s)
		if err != nil {
			for _, c := range children {
				c.Stop()
			}
			return nil, err
		}
		children = append(children, ch)
	}
	return children, nil
}

// run goes through the phases with the sampler running.
func (r *runner) run() {
	r.start = time.Now()
	s := startSampler(r.procs, r.start, r.o.Every, r.sink)
	warm := warmupFor(r.o.Duration)
	var base []baseline
	r.phase(s, "warm-up", func() { r.load(warm, 0) })
	r.phase(s, "baseline", func() { base = r.baselines() })
	r.phase(s, "load", func() { r.load(r.o.Duration-warm, 1) })
	r.phase(s, "settle", func() { r.checks(base) })
	samples, errs := s.finish()
	r.res.Samples = samples
	for _, p := range r.procs {
		if e := errs[p.name]; e != "" {
			r.harness = append(r.harness, fmt.Sprintf("%s: a sample failed: %s", p.name, e))
		}
	}
}

// phase runs f as the phase called name.
func (r *runner) phase(s *sampler, name string, f func()) {
	s.setPhase(name)
	t0 := time.Since(r.start)
	r.progress("%s", name)
	f()
	ph := Phase{Kind: "phase", Name: name, Start: t0.Seconds(), End: time.Since(r.start).Seconds()}
	r.res.Phases = append(r.res.Phases, ph)
	r.sink.add(ph)
}

// load runs the workers for d, with a progress line every tenth of the
// run, and returns once every connection has ended.
func (r *runner) load(d time.Duration, round int) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	done := r.statusEvery(ctx, max(r.o.Duration/10, time.Second))
	load(ctx, r.targets, r.o.Conns, r.o.Seed, round, r.o.Stall)
	cancel()
	<-done
}

// baseline is a process's idle level after the warm-up.
type baseline struct {
	level Level
	fds   map[int]string
}

// baselines waits for each process to go quiet and reads it.
func (r *runner) baselines() []baseline {
	var out []baseline
	for _, p := range r.procs {
		l, fds, err := quiet(p, r.o.Settle)
		if err != nil {
			r.harness = append(r.harness, fmt.Sprintf("%s: reading the baseline failed: %v", p.name, err))
		}
		out = append(out, baseline{l, fds})
	}
	return out
}

// checks waits for each process to return to its baseline.
func (r *runner) checks(base []baseline) {
	for i, p := range r.procs {
		c := settle(p, base[i].level, base[i].fds, r.o.Tolerance, r.o.Settle)
		r.res.Checks = append(r.res.Checks, c)
	}
}

// stopAll ends the children. With Out, one that is not flat first
// writes its goroutines' stacks there, to show where a leak stands.
func (r *runner) stopAll(children []*benchrun.Child) {
	for i, ch := range children {
		if c := &r.res.Checks[i]; !c.Flat && r.o.Out != "" {
			c.Stacks = "stacks-" + c.Proc + ".txt"
			path, err := filepath.Abs(filepath.Join(r.o.Out, c.Stacks))
			if err == nil {
				err = ch.WriteStacks(path)
			}
			if err != nil {
				r.harness = append(r.harness, fmt.Sprintf("%s: writing its stacks failed: %v", c.Proc, err))
			}
		}
		if err := ch.Stop(); err != nil {
			r.harness = append(r.harness, fmt.Sprintf("%s: the server exited: %v", r.targets[i].name, err))
		}
	}
}

// finish totals the run, fills in the peaks, and writes the records.
func (r *runner) finish() {
	res := r.res
	for _, tg := range r.targets {
		res.Totals = append(res.Totals, tg.t.totals(tg.name))
	}
	for i := range res.Checks {
		res.Checks[i].Peak = peak(res.Samples, res.Checks[i].Proc)
	}
	res.Failures = append(append([]string{}, r.harness...), failures(res)...)
	for _, c := range res.Checks {
		r.sink.add(c)
	}
	for _, t := range res.Totals {
		r.sink.add(t)
	}
	r.sink.add(Verdict{Kind: "verdict", Pass: res.Pass(), Failures: res.Failures})
	r.progress("done")
}
