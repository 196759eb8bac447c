//go:build unix

package restart

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"time"
)

// Connections handed over after "ok" (SendConn, ReadyWith), on the same
// control connection: each is a 5-byte header, 'C' and the length of
// its input (big-endian uint32), written with the connection's
// descriptor (SCM_RIGHTS), then the input; "D" and a zero length end
// them. The receiver reads each header alone with its descriptor, then
// exactly the input: a read never runs into the next header, whose
// descriptor a plain read would drop.
const (
	connHeader = 5
	connTag    = 'C'
	// maxConnInput bounds the input handed over with one connection: the
	// engine's default MaxInputBuffer.
	maxConnInput = 4 << 20
)

// errNoTaker is SendConn's error before a taker said it is ready, or
// after Close.
var errNoTaker = errors.New("restart: SendConn: no process took the listeners over, or Close was called")

// SendConn hands nc, a connection this process serves, to the process
// that took the listeners over (ReadyWith's serve gets it), with input:
// what this process received from nc and did not consume, which the new
// process reads first. nc is closed here either way: the new process has
// its own copy of the socket. It may be called once Taken is closed and
// until Close; calls are served one at a time. nc must expose its
// descriptor (a *net.TCPConn or *net.UnixConn: engine.Conn.DetachInput's
// and httpd.Server.HandOff's are).
func (h *Handover) SendConn(nc net.Conn, input []byte) error {
	defer nc.Close()
	if len(input) > maxConnInput {
		return fmt.Errorf("restart: SendConn: %d bytes of input, more than %d", len(input), maxConnInput)
	}
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return fmt.Errorf("restart: SendConn: a %T has no descriptor: %w", nc, errors.ErrUnsupported)
	}
	h.sendMu.Lock()
	defer h.sendMu.Unlock()
	h.mu.Lock()
	c := h.peer
	h.mu.Unlock()
	if c == nil {
		return errNoTaker
	}
	var hdr [connHeader]byte
	hdr[0] = connTag
	binary.BigEndian.PutUint32(hdr[1:], uint32(len(input)))
	c.SetWriteDeadline(time.Now().Add(writeTimeout))
	err := withFDs([]syscall.Conn{sc}, func(fds []int) error {
		_, _, err := c.WriteMsgUnix(hdr[:], syscall.UnixRights(fds...), nil)
		return err
	})
	if err == nil && len(input) > 0 {
		_, err = c.Write(input)
	}
	if err != nil {
		return fmt.Errorf("restart: SendConn: %w", err)
	}
	return nil
}

// ReadyWith is Ready for a process that takes the old one's connections
// over too: it returns once the old process has confirmed, and from then
// on a goroutine receives each connection the old one hands over
// (SendConn) and calls serve with it and its input, until the old process
// says it is done (its Close), goes away, or ctx ends (the connections
// not handed over by then stay with the old process, which closes them).
// serve must not block for long: it gives the connection to a server
// (httpd.Server.ServeConn) and returns. ConnsDone is closed once that
// goroutine has returned, and ConnsErr says why, if not for one of those.
func (t *Takeover) ReadyWith(ctx context.Context, serve func(nc net.Conn, input []byte)) error {
	c, err := t.ready()
	if err != nil {
		return err
	}
	c.SetDeadline(time.Time{})
	t.connsDone = make(chan struct{})
	go func() {
		defer close(t.connsDone)
		defer c.Close()
		stop := context.AfterFunc(ctx, func() { c.SetReadDeadline(time.Now()) })
		defer stop()
		t.connsErr = receiveConns(ctx, c, serve)
	}()
	return nil
}

// receiveConns calls serve with each connection handed over on c.
func receiveConns(ctx context.Context, c *net.UnixConn, serve func(net.Conn, []byte)) error {
	for {
		nc, input, done, err := receiveConn(c)
		switch {
		case err != nil && ctx.Err() != nil:
			return nil // stopped waiting: the rest stay with the old process
		case err != nil:
			return fmt.Errorf("restart: ReadyWith: receiving a connection: %w", err)
		case done:
			return nil
		}
		serve(nc, input)
	}
}

// ConnsDone returns a channel closed once ReadyWith's connections have
// all come (or stopped coming); nil before ReadyWith.
func (t *Takeover) ConnsDone() <-chan struct{} { return t.connsDone }

// ConnsErr reports why ReadyWith's connections stopped coming, if not
// because the old process was done, went away, or ctx ended. It is valid
// once ConnsDone is closed.
func (t *Takeover) ConnsErr() error { return t.connsErr }

// receiveConn reads one handed-over connection, or the end (done, or the
// old process's end of stream).
func receiveConn(c *net.UnixConn) (nc net.Conn, input []byte, done bool, err error) {
	var hdr [connHeader]byte
	oob := make([]byte, syscall.CmsgSpace(4))
	n, oobn, _, _, err := c.ReadMsgUnix(hdr[:], oob)
	if err == io.EOF || err == nil && n == 0 {
		return nil, nil, true, nil
	}
	if err != nil {
		return nil, nil, false, err
	}
	fds, perr := parseRights(oob[:oobn])
	if n < connHeader {
		_, err = io.ReadFull(c, hdr[n:])
	}
	if err == nil && perr != nil {
		err = perr
	}
	size := binary.BigEndian.Uint32(hdr[1:])
	switch {
	case err != nil:
	case hdr[0] == doneTag && len(fds) == 0:
		return nil, nil, true, nil
	case hdr[0] != connTag || len(fds) != 1 || size > maxConnInput:
		err = fmt.Errorf("not a connection's header (%q, %d descriptors)", hdr, len(fds))
	}
	if err != nil {
		for _, fd := range fds {
			syscall.Close(fd)
		}
		return nil, nil, false, err
	}
	syscall.CloseOnExec(fds[0])
	input = make([]byte, size)
	if _, err := io.ReadFull(c, input); err != nil {
		syscall.Close(fds[0])
		return nil, nil, false, err
	}
	f := os.NewFile(uintptr(fds[0]), "handed-over connection")
	defer f.Close()
	nc, err = net.FileConn(f)
	return nc, input, false, err
}
