package benchrun

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// manyConns dials c.Conns connections, then runs rounds until o.Duration
// has passed: in each round every connection writes 1 KiB and reads it
// back. The figure is the mean time per round; a message is one
// connection's echo.
func manyConns(ch *Child, c Case, o Options) (result, error) {
	conns, err := dialAll(dialTCP, ch.Addr(), c.Conns)
	if err != nil {
		return result{}, err
	}
	defer closeAll(conns)
	size := c.Size
	var r result
	var rounds int64
	start := time.Now()
	for round := 0; round == 0 || time.Since(start) < o.Duration; round++ {
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
		rounds++
	}
	r.elapsed = time.Since(start)
	r.msgs = rounds * int64(len(conns))
	r.bytes = r.msgs * int64(size)
	r.value = float64(r.elapsed.Microseconds()) / 1000 / float64(rounds)
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

// dialAll opens n connections to addr, one after the other.
func dialAll(dial dialFunc, addr string, n int) ([]net.Conn, error) {
	conns := make([]net.Conn, 0, n)
	for range n {
		c, err := dial(addr)
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
