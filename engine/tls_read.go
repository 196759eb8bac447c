package engine

import (
	"io"

	"github.com/galeio/gale/internal/tlsrec"
)

// deliverTLS handles bytes received on a TLS connection: fed to the
// handshake while it runs, decrypted on the loop afterwards. (The
// handshake may have read past its last record: those bytes wait in the
// tls.Conn, and pumpTLS reads them when the connection opens.)
//
// Only whole records reach the tls.Conn (tlsrec.Complete): the partial
// record at the end waits in c.in, whose buffer goes back to the
// engine's pool once empty (inbuf.go), rather than in the tls.Conn's own input
// buffer, which never shrinks. data nil (Wake, or input adopted before
// the handshake ended) runs OnData even when nothing new was decrypted.
func (c *Conn) deliverTLS(data []byte) {
	t := c.tlsOf()
	if !t.done {
		c.feedHandshake(data)
		return
	}
	raw, owned := data, len(c.in.bytes()) > 0 || data == nil
	if owned {
		c.in = c.lp.e.inputs.append(c.in, data)
		raw = c.in.bytes()
	}
	end := tlsrec.Complete(raw)
	t.tr.Offer(raw[:end])
	delivered, err := c.decrypt()
	raw = raw[end-t.tr.Unread():]
	t.tr.Offer(nil)
	if !c.lbits.has(bClosed) {
		c.lp.e.inputs.keep(&c.in, raw, owned)
	}
	switch {
	case err == io.EOF: // close_notify: a clean end, whatever follows
		c.lbits.set(bEOF, true)
		c.closeGracefully(io.EOF)
	case err != nil:
		c.closeGracefully(c.opError("read", err)) // after crypto/tls's alert
	case data == nil && !delivered && !c.lbits.has(bClosed|bClosing):
		c.onData(nil, &t.plain)
	}
}

// pumpTLS decrypts what c holds already, raw or in its tls.Conn, and runs
// OnData if that makes any plaintext: deliverTLS without new bytes, and
// without Wake's call when there is nothing.
func (c *Conn) pumpTLS() {
	t := c.tlsOf()
	raw := c.in.bytes()
	end := tlsrec.Complete(raw)
	t.tr.Offer(raw[:end])
	_, err := c.decrypt()
	rest := raw[end-t.tr.Unread():]
	t.tr.Offer(nil)
	if !c.lbits.has(bClosed) {
		c.lp.e.inputs.keep(&c.in, rest, true)
	}
	switch {
	case err == io.EOF:
		c.lbits.set(bEOF, true)
		c.closeGracefully(io.EOF)
	case err != nil:
		c.closeGracefully(c.opError("read", err))
	}
}

// decrypt reads the offered records' plaintext into the loop's buffer
// and runs OnData with it, as often as the buffer fills. It returns
// whether OnData ran, and crypto/tls's error: nil once the offered
// records are used up, io.EOF after a close_notify, or why the records
// were refused.
func (c *Conn) decrypt() (delivered bool, err error) {
	t := c.tlsOf()
	buf := c.lp.plainBuf()
	n := 0
	for !c.lbits.has(bClosed | bClosing) {
		if n == len(buf) {
			c.onData(buf[:n], &t.plain)
			delivered, n = true, 0
			continue
		}
		k, rerr := t.tc.Read(buf[n:])
		if rerr != nil {
			if !tlsrec.IsWouldBlock(rerr) {
				err = rerr
			}
			n += k
			break
		}
		if k < len(buf)-n && t.tr.Unread() == 0 {
			// The record's plaintext fitted and no record is left: a
			// further Read would only say so, at the cost of an
			// allocation inside crypto/tls.
			n += k
			break
		}
		n += k
	}
	if n > 0 && !c.lbits.has(bClosed) {
		c.onData(buf[:n], &t.plain)
		delivered = true
	}
	return delivered, err
}

// plainBuf returns the loop's plaintext buffer, shared by its TLS
// connections as the read buffer is by all.
func (lp *eloop) plainBuf() []byte {
	if lp.plain == nil {
		lp.plain = make([]byte, lp.e.opts.ReadBufferSize)
	}
	return lp.plain
}

// eofError is the close error of a connection whose peer closed the
// stream: io.EOF, or for TLS io.ErrUnexpectedEOF when the stream ended
// inside a record or the handshake (a close_notify ends it cleanly: see
// deliverTLS).
func (c *Conn) eofError() error {
	t := c.tlsOf()
	switch {
	case t == nil:
		return io.EOF
	case !t.done:
		return c.opError("tls handshake", io.ErrUnexpectedEOF)
	case len(c.in.bytes()) > 0:
		return c.opError("read", io.ErrUnexpectedEOF)
	}
	return io.EOF
}
