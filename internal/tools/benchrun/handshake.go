package benchrun

import (
	"crypto/tls"
	"errors"
	"fmt"
	"sync"
	"time"
)

// handshakes measures full TLS handshakes per second: cs.Conns clients
// each, until o.Duration has passed, open a new connection, complete a
// full handshake (the client configuration keeps no sessions, so none is
// resumed), echo cs.Size bytes and close. The latency is of the whole
// connection, from the dial to the echo.
func handshakes(ch *Child, cs Case, o Options) (result, error) {
	hists := make([]*histogram, cs.Conns)
	counts := make([]int64, cs.Conns)
	errs := make([]error, cs.Conns)
	deadline := time.Now().Add(o.Duration)
	start := time.Now()
	var wg sync.WaitGroup
	for i := range cs.Conns {
		hists[i] = newHistogram()
		wg.Add(1)
		go func() {
			defer wg.Done()
			counts[i], errs[i] = handshakeLoop(ch.Addr(), cs.Size, deadline, hists[i], byte(i))
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err := errors.Join(errs...); err != nil {
		return result{}, err
	}
	r := result{lat: newHistogram(), elapsed: elapsed}
	for i := range cs.Conns {
		r.msgs += counts[i]
		r.lat.merge(hists[i])
	}
	r.bytes = r.msgs * int64(cs.Size)
	r.value = float64(r.msgs) / elapsed.Seconds()
	return r, nil
}

// handshakeLoop is one client of handshakes: it returns the connections
// it completed.
func handshakeLoop(addr string, size int, deadline time.Time, h *histogram, seed byte) (int64, error) {
	var n int64
	for time.Now().Before(deadline) {
		t0 := time.Now()
		if err := handshakeOnce(addr, size, seed+byte(n)); err != nil {
			return n, fmt.Errorf("tls-handshake: connection %d: %w", n+1, err)
		}
		h.add(time.Since(t0))
		n++
	}
	return n, nil
}

// handshakeOnce opens a TLS connection, checks that its handshake was a
// full one, echoes size bytes and closes it.
func handshakeOnce(addr string, size int, seed byte) error {
	c, err := dialTLS(addr)
	if err != nil {
		return err
	}
	defer c.Close()
	if c.(*tls.Conn).ConnectionState().DidResume {
		return errors.New("the handshake resumed a session")
	}
	if err := echoOnce(c, size, seed); err != nil {
		return err
	}
	return c.Close()
}
