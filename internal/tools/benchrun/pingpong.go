package benchrun

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// pingpong runs c.Conns connections in a closed loop: each sends a
// c.Size-byte message and waits for its echo before sending the next.
// The TLS connections of tls-pingpong are all handshaken before the
// measurement starts.
func pingpong(ch *Child, cs Case, o Options) (result, error) {
	conns, err := dialAll(dialerFor(cs), ch.Addr(), cs.Conns)
	if err != nil {
		return result{}, err
	}
	defer closeAll(conns)
	hists := make([]*histogram, len(conns))
	counts := make([]int64, len(conns))
	errs := make([]error, len(conns))
	deadline := time.Now().Add(o.Duration)
	start := time.Now()
	var wg sync.WaitGroup
	for i, c := range conns {
		hists[i] = newHistogram()
		wg.Add(1)
		go func() {
			defer wg.Done()
			counts[i], errs[i] = pingLoop(c, cs.Size, deadline, hists[i], byte(i))
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
	r.bytes = r.msgs * int64(cs.Size)
	r.value = float64(r.msgs) / elapsed.Seconds()
	r.elapsed = elapsed
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
