package httpd

import (
	"io"

	"github.com/galeio/gale/engine"
)

// maxDiscard is how much of a body its handler left unread the loop
// reads and drops to keep the connection; past it the connection closes
// (net/http's maxPostHandlerReadBytes).
const maxDiscard = 256 << 10

// feed moves the body bytes in holds into the body of the request in
// progress, and reports whether the body is over (c.cur is then nil).
// It runs on the loop.
func (c *conn) feed(in *engine.Inbound) bool {
	ex := c.cur
	for in.Len() > 0 {
		p := in.Bytes()
		var n int
		if ex.chunked {
			k, err := ex.dec.frame(p)
			if err != nil {
				c.quit.Store(true)
				c.endBody(ex, err)
				return true
			}
			in.Discard(k)
			if ex.dec.done {
				c.endBody(ex, io.EOF)
				return true
			}
			p = in.Bytes()
			if ex.dec.n == 0 {
				if k == 0 {
					return false // framing needs more input
				}
				continue
			}
			p = p[:min(uint64(len(p)), ex.dec.n)]
		} else {
			p = p[:min(int64(len(p)), ex.remaining)]
		}
		n = c.take(ex, p)
		in.Discard(n)
		if c.cur == nil {
			return true // discarded past the bound: ex is no longer the loop's
		}
		if ex.chunked {
			ex.dec.took(n)
		} else if ex.remaining -= int64(n); ex.remaining == 0 {
			c.endBody(ex, io.EOF)
			return true
		}
		if n < len(p) {
			return false // the body's buffer is full
		}
	}
	if c.eof {
		c.endBody(ex, errUnexpectedEOF)
		return true
	}
	return false
}

// take gives p to the body, or drops it once the handler closed the
// body or returned, and returns how many bytes were used. Past
// maxDiscard dropped bytes the connection closes.
func (c *conn) take(ex *exchange, p []byte) int {
	n, dropped := ex.body.push(p)
	if dropped {
		if ex.discarded += int64(n); ex.discarded > maxDiscard {
			// Too much to drop: the connection closes, lingering once
			// the handler has returned (its response is written).
			c.quit.Store(true)
			c.endBody(ex, errUnexpectedEOF)
		}
	}
	return n
}

// endBody ends the body of the request in progress with err (io.EOF when
// it is whole) and drops the loop's hold on its exchange.
func (c *conn) endBody(ex *exchange, err error) {
	if c.cur != ex {
		return
	}
	c.cur = nil
	if err == errUnexpectedEOF && ex.chunked && c.eof {
		err = ex.dec.atEOF() // net/http's words for where it ended
	}
	var trailer = ex.dec.trailer
	ex.body.finish(err, trailer)
	if err != io.EOF {
		c.quit.Store(true)
	}
	ex.bodyDone.Store(true)
	ex.release()
}
