package gorilla

import (
	"errors"
	"io"
	"net"
	"os"
	"time"

	"github.com/galeio/gale/websocket"
)

// NextReader returns the next data message: its type, TextMessage or
// BinaryMessage, and a reader of its bytes, which are valid until the
// next call to NextReader, ReadMessage or ReadJSON (a reader left
// unfinished is then discarded). It blocks until the message begins, or
// the read deadline passes, running the ping, pong and close handlers of
// the control frames it meets on the way. The reader brings the message
// as its pieces arrive: a message of any length (up to SetReadLimit's)
// streams through, holding at most the inbox's bound (64 KiB) in memory.
//
// The errors: a *CloseError when the peer closed the connection (after
// the close handler ran) or when it ended without a close frame
// (CloseAbnormalClosure); a net.Error whose Timeout is true when the read
// deadline passed; ErrReadLimit; an error matching net.ErrClosed after
// Close; a handler's error. Any error is final, as with gorilla: every
// later read returns it again (and, like gorilla, the 1000th repeated
// read of a failed connection panics, to catch a loop that ignores the
// error).
func (c *Conn) NextReader() (messageType int, r io.Reader, err error) {
	if c.reader != nil {
		c.reader.done = true
		c.reader = nil
	}
	for c.readErr == nil {
		it, err := c.next()
		if err != nil {
			return noFrame, nil, err
		}
		switch it.kind {
		case itemStart:
			c.msgN = 0
			c.reader = &messageReader{c: c}
			return it.typ, c.reader, nil
		case itemData:
			// The rest of a message whose reader was discarded.
		}
	}
	c.readErrCount++
	if c.readErrCount >= 1000 {
		panic("repeated read on failed websocket connection")
	}
	return noFrame, nil, c.readErr
}

const noFrame = -1

// next returns the next item, after running the handlers of the control
// frames before it; it blocks while there is none, until the read
// deadline. An error is recorded as c.readErr.
func (c *Conn) next() (item, error) {
	for {
		it, err := c.pop()
		if err != nil {
			return item{}, c.fail(err)
		}
		switch it.kind {
		case itemPing:
			err = c.PingHandler()(string(it.data))
		case itemPong:
			err = c.PongHandler()(string(it.data))
		case itemEnd:
			err = it.err
			if ce, ok := err.(*CloseError); ok && ce.Code != CloseAbnormalClosure {
				if herr := c.CloseHandler()(ce.Code, ce.Text); herr != nil {
					err = herr
				}
			}
		default:
			return it, nil
		}
		if err != nil {
			return item{}, c.fail(err)
		}
	}
}

// fail records err as the reader's final error, and returns it.
func (c *Conn) fail(err error) error {
	if c.readErr == nil {
		c.readErr = err
	}
	return c.readErr
}

// pop waits for the inbox's next item, until the read deadline.
func (c *Conn) pop() (item, error) {
	for {
		it, deadline, ok := c.in.pop(c.ws.Load())
		if ok {
			return it, nil
		}
		var timeout <-chan time.Time
		if !deadline.IsZero() {
			d := time.Until(deadline)
			if d <= 0 {
				return item{}, c.timeoutError()
			}
			if c.timer == nil {
				c.timer = time.NewTimer(d)
			} else {
				c.timer.Reset(d)
			}
			timeout = c.timer.C
		}
		select {
		case <-c.in.wake:
		case <-timeout:
		}
		if c.timer != nil {
			c.timer.Stop()
		}
	}
}

// timeoutError is a passed read deadline's error: a *net.OpError around
// os.ErrDeadlineExceeded, as a net.Conn's read returns.
func (c *Conn) timeoutError() error {
	return &net.OpError{Op: "read", Net: "tcp", Source: c.local, Addr: c.remote, Err: os.ErrDeadlineExceeded}
}

// ReadMessage reads the next data message whole: NextReader, then all of
// its reader. p is the caller's.
func (c *Conn) ReadMessage() (messageType int, p []byte, err error) {
	messageType, r, err := c.NextReader()
	if err != nil {
		return messageType, nil, err
	}
	mr := r.(*messageReader)
	for {
		it, err := mr.piece()
		if err != nil {
			return messageType, p, err
		}
		if p == nil {
			p = it.data // the first piece is the message's own copy
		} else {
			p = append(p, it.data...)
		}
		if it.final {
			if p == nil {
				p = []byte{}
			}
			return messageType, p, nil
		}
	}
}

// messageReader is NextReader's reader of one message.
type messageReader struct {
	c    *Conn
	buf  []byte // the rest of the piece being read
	eof  bool   // the final piece was reached
	done bool   // a later NextReader discarded it
}

// piece returns the message's next piece.
func (r *messageReader) piece() (item, error) {
	c := r.c
	it, err := c.next()
	switch {
	case err != nil:
		if err == io.EOF {
			err = errUnexpectedEOF
		}
		return item{}, err
	case it.kind != itemData:
		// A message begins before the last one ended: gale's loop does
		// not let that happen.
		return item{}, c.fail(errors.New("websocket: internal error: message without its end"))
	}
	// The loop checks the limit as a message arrives; one that came
	// before SetReadLimit is checked here, as the reader reaches it.
	c.msgN += int64(len(it.data))
	if limit := c.readLimit.Load(); limit > 0 && c.msgN > limit {
		if ws := c.ws.Load(); ws != nil {
			ws.Close(websocket.StatusMessageTooBig, "")
		}
		return item{}, c.fail(ErrReadLimit)
	}
	if it.final {
		r.eof = true
	}
	return it, nil
}

// Read reads the message's bytes; io.EOF at its end. Handlers of control
// frames met between its pieces run in it.
func (r *messageReader) Read(b []byte) (int, error) {
	if r.done {
		return 0, io.EOF
	}
	for len(r.buf) == 0 {
		if r.eof {
			return 0, io.EOF
		}
		if r.c.readErr != nil {
			return 0, r.c.readErr
		}
		it, err := r.piece()
		if err != nil {
			return 0, err
		}
		r.buf = it.data
	}
	n := copy(b, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

// SetReadDeadline sets the time after which a read waiting for the peer
// fails with a timeout (a net.Error), which, as with gorilla, is final:
// the connection is no longer read. The zero time means none. What had
// arrived before the deadline is still read. It may be called from any
// goroutine, a handler run by the reader included.
func (c *Conn) SetReadDeadline(t time.Time) error {
	c.in.setDeadline(t)
	return nil
}

// SetReadLimit sets the largest message, in bytes, that reads accept: a
// longer one makes the connection send a close frame 1009 and its reads
// fail with ErrReadLimit once they reach it. Zero or less: no limit (the
// default, as with gorilla). The loop checks it as a message arrives,
// and the reader as it reaches one that came before the limit was set.
func (c *Conn) SetReadLimit(limit int64) {
	c.readLimit.Store(max(limit, 0))
}
