package httpd_test

import (
	"context"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
)

// connWatch follows the connections a Transport dials, to tell those the
// client closed from those the server ended. net/http's Transport drops a
// connection whose request write it has not seen finish within 50 ms of
// the response's end (maxWriteWaitBeforeConnReuse), which a loaded
// machine can cause, and dials another: a test of keep-alive must not
// count that against the server.
type connWatch struct {
	mu     sync.Mutex
	dialed int
	closed map[string]bool // local addresses of connections the client closed
	ended  []string        // those of connections whose read failed before the client closed them
}

// watchConns makes tr dial through a connWatch, which it returns.
func watchConns(tr *http.Transport) *connWatch {
	w := &connWatch{closed: map[string]bool{}}
	var d net.Dialer
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		w.mu.Lock()
		w.dialed++
		w.mu.Unlock()
		return &watchedConn{Conn: c, w: w}, nil
	}
	return w
}

// counts returns the connections dialed and the local addresses of those
// the server ended.
func (w *connWatch) counts() (dialed int, ended []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.dialed, append([]string(nil), w.ended...)
}

// closedByClient reports whether the client closed the connection from
// local.
func (w *connWatch) closedByClient(local string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.closed[local]
}

type watchedConn struct {
	net.Conn
	w       *connWatch
	closing atomic.Bool
}

func (c *watchedConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if err != nil && !c.closing.Load() {
		c.w.mu.Lock()
		c.w.ended = append(c.w.ended, c.LocalAddr().String())
		c.w.mu.Unlock()
	}
	return n, err
}

func (c *watchedConn) Close() error {
	c.closing.Store(true)
	c.w.mu.Lock()
	c.w.closed[c.LocalAddr().String()] = true
	c.w.mu.Unlock()
	return c.Conn.Close()
}
