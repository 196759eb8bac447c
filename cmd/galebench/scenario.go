package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
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

// scenarioFuncs drive a server at addr; pid is the server's process.
var scenarioFuncs = map[string]func(addr string, pid int, o options) (result, error){
	"stream":   func(addr string, _ int, o options) (result, error) { return stream(addr, o) },
	"pingpong": func(addr string, _ int, o options) (result, error) { return pingpong(addr, o) },
	"conns":    func(addr string, _ int, o options) (result, error) { return manyConns(addr, o) },
	"idle":     idle,
}

// measure starts server srv, runs drive against it and adds the server's
// and the client's CPU time and the server's memory to the result.
func measure(srv string, drive func(addr string, pid int) (result, error)) (result, error) {
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
	r, err := drive(c.addr, pid)
	cpu1, cerr := procCPU(pid)
	rss, rerr := procPeakRSS(pid)
	if err != nil {
		c.dump() // a failing server shows where it stands
	}
	c.stop()
	if err = errors.Join(err, cerr, rerr); err != nil {
		return result{}, err
	}
	r.serverCPU = cpu1 - cpu0
	r.clientCPU = selfCPU() - self0
	r.serverRSS = rss
	return r, nil
}

// patternPeriod is prime, so the pattern never lines up with write sizes.
const patternPeriod = 65521

// patternTable holds two periods of the stream pattern, so that the bytes
// at any offset are one slice: patternAt(off, n) for n <= patternPeriod.
var patternTable = func() []byte {
	t := make([]byte, 2*patternPeriod)
	x := uint32(2463534242)
	for i := range patternPeriod {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		t[i] = byte(x)
	}
	copy(t[patternPeriod:], t[:patternPeriod])
	return t
}()

// patternAt returns the n pattern bytes at stream offset off.
func patternAt(off int64, n int) []byte {
	i := int(off % patternPeriod)
	return patternTable[i : i+n]
}

// stream sends 64 KiB writes over one connection for o.duration while a
// second goroutine reads the echo back and checks every byte. At the end
// the writer half-closes the connection and the reader reads to end of
// file, so it knows when the last echoed byte has arrived.
func stream(addr string, o options) (result, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return result{}, err
	}
	defer c.Close()
	const chunk = 64 << 10
	var sent int64
	stop := make(chan struct{})
	werr := make(chan error, 1)
	go func() {
		buf := make([]byte, chunk)
		for {
			select {
			case <-stop:
				werr <- c.(*net.TCPConn).CloseWrite()
				return
			default:
			}
			for i := 0; i < chunk; {
				i += copy(buf[i:], patternAt(sent+int64(i), min(chunk-i, patternPeriod)))
			}
			if _, err := c.Write(buf); err != nil {
				werr <- err
				return
			}
			sent += chunk
		}
	}()
	start := time.Now()
	deadline := start.Add(o.duration)
	buf := make([]byte, min(chunk, patternPeriod))
	var got int64
	for {
		if time.Now().After(deadline) {
			closeOnce(stop)
		}
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		n, err := c.Read(buf)
		if !bytes.Equal(buf[:n], patternAt(got, n)) {
			return result{}, fmt.Errorf("stream: the %d bytes echoed at offset %d differ from those sent", n, got)
		}
		got += int64(n)
		if err == io.EOF && isClosed(stop) {
			break
		}
		if err != nil {
			closeOnce(stop)
			return result{}, fmt.Errorf("stream: read after %d bytes: %w", got, err)
		}
	}
	elapsed := time.Since(start)
	if err := <-werr; err != nil {
		return result{}, err
	}
	if got != sent { // sent is safe to read: the writer has finished
		return result{}, fmt.Errorf("stream: %d bytes echoed, %d sent", got, sent)
	}
	return result{value: float64(got) / elapsed.Seconds() / 1e6, msgs: got / chunk, bytes: got}, nil
}

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
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
