package engine

import (
	"bytes"
	"io"
	"net"
)

// Inbound is a view of the bytes a connection has received and not yet
// consumed. It is valid only during the OnData call that receives it, and
// so are the slices its methods return; copy what must outlive the call.
// Bytes left unconsumed are presented again, followed by new ones, at the
// next OnData.
//
// An Inbound is read from its loop goroutine only.
type Inbound struct {
	buf  []byte   // unconsumed bytes
	from net.Addr // datagrams: the source
	c    *Conn    // whose OnData runs (see Conn.unconsumed); nil between calls
	pc   *pooled  // whose pooled OnData runs, off the loop; nil between calls
}

// Len returns the number of unconsumed bytes.
func (in *Inbound) Len() int { return len(in.buf) }

// Bytes returns every unconsumed byte without consuming it.
func (in *Inbound) Bytes() []byte { return in.buf }

// Peek returns the next n bytes without consuming them, or
// io.ErrShortBuffer (and every byte there is) when fewer are available.
func (in *Inbound) Peek(n int) ([]byte, error) {
	if n > len(in.buf) {
		return in.buf, io.ErrShortBuffer
	}
	return in.buf[:n], nil
}

// Next consumes and returns the next n bytes, or consumes nothing and
// returns io.ErrShortBuffer when fewer are available.
func (in *Inbound) Next(n int) ([]byte, error) {
	if n > len(in.buf) {
		return nil, io.ErrShortBuffer
	}
	b := in.buf[:n]
	in.buf = in.buf[n:]
	return b, nil
}

// Discard consumes up to n bytes and returns how many it consumed.
func (in *Inbound) Discard(n int) int {
	n = min(max(n, 0), len(in.buf))
	in.buf = in.buf[n:]
	return n
}

// ReadUntil consumes and returns the bytes up to and including the first
// delim. Without a delim it consumes nothing and returns io.ErrShortBuffer:
// wait for more data, or bound the wait with Len.
func (in *Inbound) ReadUntil(delim byte) ([]byte, error) {
	i := bytes.IndexByte(in.buf, delim)
	if i < 0 {
		return nil, io.ErrShortBuffer
	}
	return in.Next(i + 1)
}

// Read copies unconsumed bytes into p and consumes them: Inbound is an
// io.Reader. With nothing left it returns 0, io.EOF.
func (in *Inbound) Read(p []byte) (int, error) {
	if len(in.buf) == 0 {
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	n := copy(p, in.buf)
	in.buf = in.buf[n:]
	return n, nil
}

// From returns the source of the datagram being delivered (UDP), or nil
// on a stream.
func (in *Inbound) From() net.Addr { return in.from }
