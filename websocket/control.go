package websocket

import (
	"encoding/binary"
	"errors"
	"time"
	"unicode/utf8"

	"github.com/galeio/gale/engine"
)

// control handles a whole control frame; p is its unmasked payload, valid
// during the call.
func (c *Conn) control(op MessageType, p []byte) engine.Action {
	switch op {
	case PingMessage:
		c.writeControl(PongMessage, p) // fails only once closing: nothing to do then
		if c.cfg.pinger != nil {
			c.callPing(p)
		}
	case PongMessage:
		if c.cfg.ponger != nil {
			c.callPong(p)
		}
	case CloseMessage:
		return c.closeReceived(p)
	}
	return engine.None
}

// closeReceived answers the peer's close frame (RFC 6455 §5.5.1, §7.1.5):
// with the same code when this end had not sent one, and ends the
// connection: a server closes the TCP connection once the answer is sent;
// a client waits for the server to (§7.1.1), for at most CloseTimeout.
func (c *Conn) closeReceived(p []byte) engine.Action {
	code, reason, err := parseClose(p)
	if err != nil {
		return c.fail(err)
	}
	c.rd.closing = true
	c.setCloseErr(&CloseError{Code: code, Reason: reason})
	c.wmu.Lock()
	if !c.closeSent {
		var echo [2]byte
		answer := echo[:0]
		if code != StatusNoStatusRcvd {
			answer = binary.BigEndian.AppendUint16(answer, uint16(code))
		}
		c.writeCloseLocked(answer)
	}
	c.wmu.Unlock()
	if c.role == client {
		c.startCloseWait()
		return engine.None
	}
	return c.closeAfterOutput()
}

// parseClose reads a close frame's payload (§5.5.1, §7.4): empty, or a
// code this end could have sent and a UTF-8 reason.
func parseClose(p []byte) (StatusCode, string, error) {
	switch {
	case len(p) == 0:
		return StatusNoStatusRcvd, "", nil
	case len(p) == 1:
		return 0, "", protocolErr("close frame with a one-byte payload")
	}
	code := StatusCode(binary.BigEndian.Uint16(p))
	if !code.sendable() {
		return 0, "", protocolErr("close frame with an invalid status code")
	}
	if !utf8.Valid(p[2:]) {
		return 0, "", invalidUTF8()
	}
	return code, string(p[2:]), nil
}

// fail fails the connection (§7.1.7) for err: it sends a close frame with
// err's code, unless one was sent, and closes once it is written.
func (c *Conn) fail(err error) engine.Action {
	code := StatusProtocolError
	var pe *ProtocolError
	switch {
	case errors.Is(err, ErrReadLimit):
		code = StatusMessageTooBig
	case errors.As(err, &pe):
		code = pe.Code
	}
	return c.failCode(code, err)
}

// internalError fails c, whose handler panicked (pe, recovered and
// logged by engine.Conn.Recover), with a close frame 1011: a condition
// the server did not expect (RFC 6455 §7.4.1). OnClose gets pe.
func (c *Conn) internalError(pe *engine.PanicError) engine.Action {
	return c.failCode(StatusInternalError, pe)
}

// failCode fails the connection for err with a close frame of code.
func (c *Conn) failCode(code StatusCode, err error) engine.Action {
	c.rd.closing = true
	c.setCloseErr(err)
	c.wmu.Lock()
	if !c.closeSent {
		c.writeCloseLocked(binary.BigEndian.AppendUint16(nil, uint16(code)))
	}
	c.wmu.Unlock()
	return c.closeAfterOutput()
}

// closeAfterOutput ends the connection as the engine's Close action does,
// once its queued output (the close frame last) is written, but waits
// for that no longer than CloseTimeout: a peer that ends the connection
// (a close frame, a protocol error, the end of its stream) and does not
// read could otherwise hold it, and its queue, for good. It runs on the
// loop.
func (c *Conn) closeAfterOutput() engine.Action {
	c.startCloseWait()
	return engine.Close
}

// startCloseWait bounds the wait for the peer's close frame (or, for a
// client, for the server's TCP close; for a connection that is closing,
// for its output to be written) by CloseTimeout. It runs on the loop.
func (c *Conn) startCloseWait() {
	if !c.closeWait {
		c.wmu.Lock()
		c.rareLocked().closeBy = time.Now().Add(c.cfg.CloseTimeout).UnixNano()
		c.wmu.Unlock()
		c.closeWait = true
	}
	c.ec().SetReadDeadline(time.Unix(0, c.rare.Load().closeBy))
}

// extendCloseWait keeps the close timeout armed: the engine clears a read
// deadline once input is consumed, and input may still come while
// closing.
func (c *Conn) extendCloseWait() {
	by := c.rare.Load().closeBy
	if time.Now().UnixNano() >= by {
		c.setCloseErr(ErrCloseTimeout)
		c.ec().Abort()
		return
	}
	c.ec().SetReadDeadline(time.Unix(0, by))
}
