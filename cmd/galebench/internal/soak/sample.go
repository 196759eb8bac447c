package soak

import (
	"sync"
	"sync/atomic"
	"time"
)

// Sample is one reading of one process: a line of soak.jsonl.
type Sample struct {
	Kind  string  `json:"kind"`  // "sample"
	T     float64 `json:"t"`     // seconds since the start
	Phase string  `json:"phase"` // warm-up, baseline, load or settle
	Proc  string  `json:"proc"`  // a server's name, or "client"
	Level
	Conns int64 `json:"conns"` // client connections open to it (to all servers, for the client)
}

// sampler reads every process at a fixed interval, from its own
// goroutine, and sends the samples to the sink as it goes.
type sampler struct {
	procs []*proc
	start time.Time
	sink  *sink
	phase atomic.Pointer[string]
	now   chan struct{} // a sample now, out of turn
	stop  chan struct{}
	done  chan struct{}

	mu      sync.Mutex
	samples []Sample
	errs    map[string]string // each process's first failed reading
}

func startSampler(procs []*proc, start time.Time, every time.Duration, sk *sink) *sampler {
	s := &sampler{procs: procs, start: start, sink: sk, errs: map[string]string{},
		now: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
	first := "start"
	s.phase.Store(&first)
	go s.run(every)
	return s
}

// setPhase names the phase the next samples belong to, and takes one at
// once, so that each phase's first levels are in the series.
func (s *sampler) setPhase(name string) {
	s.phase.Store(&name)
	select {
	case s.now <- struct{}{}:
	case <-s.done:
	}
}

func (s *sampler) run(every time.Duration) {
	defer close(s.done)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		s.once()
		select {
		case <-tick.C:
		case <-s.now:
		case <-s.stop:
			s.once() // the levels at the end
			return
		}
	}
}

// once reads every process.
func (s *sampler) once() {
	for _, p := range s.procs {
		l, _, err := p.read()
		s.mu.Lock()
		if err != nil {
			if s.errs[p.name] == "" {
				s.errs[p.name] = err.Error()
			}
			s.mu.Unlock()
			continue
		}
		sm := Sample{Kind: "sample", T: time.Since(s.start).Seconds(), Phase: *s.phase.Load(), Proc: p.name, Level: l, Conns: p.conns()}
		s.samples = append(s.samples, sm)
		s.mu.Unlock()
		s.sink.add(sm)
	}
}

// finish stops the sampler and returns its samples and the processes'
// failed readings.
func (s *sampler) finish() ([]Sample, map[string]string) {
	close(s.stop)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.samples, s.errs
}

// peak returns the highest of each figure among proc's samples.
func peak(samples []Sample, proc string) Level {
	var l Level
	for _, s := range samples {
		if s.Proc == proc {
			l.FDs, l.Goroutines, l.RSS = max(l.FDs, s.FDs), max(l.Goroutines, s.Goroutines), max(l.RSS, s.RSS)
		}
	}
	return l
}
