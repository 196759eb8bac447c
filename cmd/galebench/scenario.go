package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// result is what one run of a scenario measured.
type result struct {
	value     float64       // the scenario's headline figure
	msgs      int64         // messages (or rounds) completed
	bytes     int64         // bytes echoed and verified
	serverCPU time.Duration // CPU the server process used during the run
	clientCPU time.Duration // CPU the load generator used
	serverRSS int64         // the server's peak resident set, bytes
	lat       *histogram    // per-message latency, when measured
}

var scenarioFuncs = map[string]func(addr string, o options) (result, error){
	"stream":   stream,
	"pingpong": pingpong,
	"conns":    manyConns,
}

// measure starts server srv, runs drive against it and adds the server's
// and the client's CPU time and the server's memory to the result.
func measure(srv string, drive func(addr string) (result, error)) (result, error) {
	c, err := startServer(srv)
	if err != nil {
		return result{}, err
	}
	pid := c.cmd.Process.Pid
	cpu0, err := procCPU(pid)
	if err != nil {
		c.stop()
		return result{}, err
	}
	self0 := selfCPU()
	r, err := drive(c.addr)
	cpu1, cerr := procCPU(pid)
	rss, rerr := procPeakRSS(pid)
	c.stop()
	if err = errors.Join(err, cerr, rerr); err != nil {
		return result{}, err
	}
	r.serverCPU = cpu1 - cpu0
	r.clientCPU = selfCPU() - self0
	r.serverRSS = rss
	return r, nil
}

// pattern is the byte at stream offset i: varied, and cheap to check.
func pattern(i int64) byte { return byte(i*7 + i>>8) }

// stream sends 64 KiB writes over one connection for o.duration while a
// second goroutine reads the echo back and checks every byte.
func stream(addr string, o options) (result, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return result{}, err
	}
	defer c.Close()
	const chunk = 64 << 10
	var sent atomic.Int64
	stop := make(chan struct{})
	werr := make(chan error, 1)
	go func() {
		buf := make([]byte, chunk)
		var off int64
		for {
			select {
			case <-stop:
				werr <- nil
				return
			default:
			}
			for i := range buf {
				buf[i] = pattern(off + int64(i))
			}
			if _, err := c.Write(buf); err != nil {
				werr <- err
				return
			}
			off += chunk
			sent.Store(off)
		}
	}()
	start := time.Now()
	buf := make([]byte, chunk)
	var got int64
	deadline := start.Add(o.duration)
	for {
		if time.Now().After(deadline) && got == sent.Load() {
			break
		}
		if time.Now().After(deadline) {
			closeOnce(stop)
		}
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		n, err := c.Read(buf)
		for i := range n {
			if buf[i] != pattern(got+int64(i)) {
				return result{}, fmt.Errorf("stream: byte %d is %#x, want %#x", got+int64(i), buf[i], pattern(got+int64(i)))
			}
		}
		got += int64(n)
		if err != nil {
			return result{}, fmt.Errorf("stream: read after %d bytes: %w", got, err)
		}
	}
	elapsed := time.Since(start)
	closeOnce(stop)
	if err := <-werr; err != nil {
		return result{}, err
	}
	return result{value: float64(got) / elapsed.Seconds() / 1e6, msgs: got / chunk, bytes: got}, nil
}

func closeOnce(ch chan struct{}) {
	select {
	case <-ch:
	default:
		close(ch)
	}
}

// pingpong runs o.conns connections in a closed loop: each sends an
// o.size-byte message and waits for its echo before sending the next.
func pingpong(addr string, o options) (result, error) {
	conns, err := dialAll(addr, o.conns)
	if err != nil {
		return result{}, err
	}
	defer closeAll(conns)
	hists := make([]*histogram, len(conns))
	counts := make([]int64, len(conns))
	errs := make([]error, len(conns))
	deadline := time.Now().Add(o.duration)
	start := time.Now()
	var wg sync.WaitGroup
	for i, c := range conns {
		hists[i] = newHistogram()
		wg.Add(1)
		go func() {
			defer wg.Done()
			counts[i], errs[i] = pingLoop(c, o.size, deadline, hists[i], byte(i))
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err := errors.Join(errs...); err != nil {
		return result{}, err
	}
	var r result
	r.lat = newHistogram()
	for i := range conns {
		r.msgs += counts[i]
		r.lat.merge(hists[i])
	}
	r.bytes = r.msgs * int64(o.size)
	r.value = float64(r.msgs) / elapsed.Seconds()
	return r, nil
}

func pingLoop(c net.Conn, size int, deadline time.Time, h *histogram, seed byte) (int64, error) {
	out := make([]byte, size)
	in := make([]byte, size)
	var n int64
	for time.Now().Before(deadline) {
		for i := range out {
			out[i] = seed + byte(n) + byte(i)
		}
		t0 := time.Now()
		c.SetDeadline(t0.Add(10 * time.Second))
		if _, err := c.Write(out); err != nil {
			return n, err
		}
		if _, err := io.ReadFull(c, in); err != nil {
			return n, err
		}
		h.add(time.Since(t0))
		if string(in) != string(out) {
			return n, fmt.Errorf("pingpong: echo %q, want %q", in, out)
		}
		n++
	}
	return n, nil
}

// manyConns dials o.many connections, then runs rounds until o.duration
// has passed: in each round every connection writes 1 KiB and reads it
// back. The figure is the mean time per round.
func manyConns(addr string, o options) (result, error) {
	conns, err := dialAll(addr, o.many)
	if err != nil {
		return result{}, err
	}
	defer closeAll(conns)
	const size = 1024
	var r result
	start := time.Now()
	for round := 0; round == 0 || time.Since(start) < o.duration; round++ {
		errs := make([]error, len(conns))
		var wg sync.WaitGroup
		for i, c := range conns {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = echoOnce(c, size, byte(round+i))
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return result{}, err
		}
		r.msgs++
	}
	elapsed := time.Since(start)
	r.bytes = r.msgs * int64(len(conns)) * size
	r.value = float64(elapsed.Microseconds()) / 1000 / float64(r.msgs)
	return r, nil
}

func echoOnce(c net.Conn, size int, seed byte) error {
	out := make([]byte, size)
	for i := range out {
		out[i] = seed + byte(i)
	}
	c.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := c.Write(out); err != nil {
		return err
	}
	in := make([]byte, size)
	if _, err := io.ReadFull(c, in); err != nil {
		return err
	}
	if string(in) != string(out) {
		return errors.New("conns: echoed bytes differ")
	}
	return nil
}

func dialAll(addr string, n int) ([]net.Conn, error) {
	conns := make([]net.Conn, 0, n)
	for range n {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			closeAll(conns)
			return nil, fmt.Errorf("dial %d of %d: %w", len(conns)+1, n, err)
		}
		conns = append(conns, c)
	}
	return conns, nil
}

func closeAll(conns []net.Conn) {
	for _, c := range conns {
		c.Close()
	}
}
