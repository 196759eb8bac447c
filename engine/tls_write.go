package engine

import "io"

// writeTLS encrypts p into records that go out through writeRaw.
func (c *Conn) writeTLS(p []byte) (int, error) {
	t := c.tlsOf()
	t.wmu.Lock()
	defer t.wmu.Unlock()
	return t.tc.Write(p)
}

// writevTLS encrypts bufs in order, with no other Write between them.
func (c *Conn) writevTLS(bufs [][]byte) (int, error) {
	t := c.tlsOf()
	t.wmu.Lock()
	defer t.wmu.Unlock()
	total := 0
	for _, b := range bufs {
		n, err := t.tc.Write(b)
		total += n
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// closeNotify sends a TLS connection's close_notify alert, once, if its
// handshake is over; other connections have none to send. crypto/tls
// queues it through writeRaw, ahead of the close.
func (c *Conn) closeNotify() {
	if t := c.tlsOf(); t != nil && t.est.Load() {
		t.wmu.Lock()
		c.setAlert(true)
		t.tc.CloseWrite()
		c.setAlert(false)
		t.wmu.Unlock()
	}
}

// setAlert starts or stops counting what writeRaw writes as the
// close_notify record (tlsState.alert).
func (c *Conn) setAlert(on bool) {
	c.mu.Lock()
	c.mbits.set(bAlert, on)
	c.mu.Unlock()
}

// alertBytes returns the size of the close_notify record c wrote, 0 if
// none.
func (c *Conn) alertBytes() int {
	t := c.tlsOf()
	if t == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return t.alert
}

// closed ends what the TLS state holds for a connection that finished
// with err: a handshake still waiting for input stops, and DialTLS
// learns why. Loop goroutine.
func (t *tlsState) closed(err error) {
	t.dead.Store(true)
	t.tr.CloseWith(io.ErrUnexpectedEOF)
	t.plain = nil
	if hs := t.hs; hs != nil {
		if err == nil {
			err = ErrEngineStopped
		}
		hs.report(err)
		t.endHandshake()
	}
}
