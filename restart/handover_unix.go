//go:build unix

package restart

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Offer offers lns, by name, on a Unix control socket at path, for a new
// process to take over with Take, and returns at once: the offer is
// served by a goroutine of its own until a taker has said it is ready
// (Taken) or Close is called. One taker is served at a time: another is
// refused (its Take fails with ErrBusy); a taker that goes, or says
// nothing for two minutes, before Ready, leaves the offer open and the
// listeners with this process, which goes on serving on them.
//
// A socket file left at path by a process that ended is removed; one that
// a running process listens on fails Offer with an error wrapping ErrBusy.
// Names must be non-empty, without a newline; each listener must have a
// descriptor (net's TCP and Unix listeners do); at most 253 listeners.
// The caller goes on serving on lns meanwhile, and closes them itself.
func Offer(path string, lns map[string]net.Listener) (*Handover, error) {
	h := &Handover{path: path, taken: make(chan struct{}), done: make(chan struct{})}
	if len(lns) > maxListeners {
		return nil, fmt.Errorf("restart: Offer of %d listeners, more than %d", len(lns), maxListeners)
	}
	for name, ln := range lns {
		if name == "" || strings.ContainsAny(name, "\n") {
			return nil, fmt.Errorf("restart: Offer of a listener named %q: names are non-empty, without newlines", name)
		}
		if _, ok := ln.(syscall.Conn); !ok {
			return nil, fmt.Errorf("restart: listener %q (%T) has no descriptor to hand over", name, ln)
		}
		h.names = append(h.names, name)
		h.lns = append(h.lns, ln)
	}
	ln, err := listenControl(path)
	if err != nil {
		return nil, err
	}
	h.ln = ln
	go h.serve()
	return h, nil
}

// listenControl listens at path, removing a stale socket file there.
func listenControl(path string) (*net.UnixListener, error) {
	addr := &net.UnixAddr{Name: path, Net: "unix"}
	ln, err := net.ListenUnix("unix", addr)
	if err == nil || !errors.Is(err, syscall.EADDRINUSE) {
		return ln, wrapOp("listen", path, err)
	}
	c, derr := net.DialTimeout("unix", path, time.Second)
	if derr == nil {
		c.Close()
		return nil, fmt.Errorf("restart: Offer at %s: a running process offers there: %w", path, ErrBusy)
	}
	if !errors.Is(derr, syscall.ECONNREFUSED) {
		return nil, fmt.Errorf("restart: Offer at %s: in use, and not by a socket that could be checked: %w", path, derr)
	}
	os.Remove(path) // stale: its process ended without removing it
	ln, err = net.ListenUnix("unix", addr)
	return ln, wrapOp("listen", path, err)
}

// wrapOp wraps err, if any, with the operation and the control socket.
func wrapOp(op, path string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("restart: %s on the control socket %s: %w", op, path, err)
}

// serve accepts takers until the listeners are taken or h is closed.
func (h *Handover) serve() {
	defer close(h.done)
	defer h.takers.Wait()
	for {
		c, err := h.ln.AcceptUnix()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return // closed (Close, or the hand-over done)
		}
		if !h.claim(c) {
			c.SetWriteDeadline(time.Now().Add(time.Second))
			c.Write([]byte(busyLine))
			c.Close()
			continue
		}
		h.takers.Add(1)
		go h.serveTaker(c)
	}
}

// claim reserves h for one taker, and reports whether it could.
func (h *Handover) claim(c *net.UnixConn) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.busy || h.closed {
		return false
	}
	h.busy, h.cur = true, c
	return true
}

// serveTaker sends c the listeners and waits for its "ready"; on
// anything else, the offer stays open. A taker that is ready keeps c for
// the connections handed over after (SendConn), until Close.
//
// The taker is recorded and Taken closed before it hears "ok": a new
// process may report itself serving as soon as its Ready returns, and
// whoever then drains this one must find Taken closed and SendConn's
// peer set. sendMu, held until "ok" is written, keeps a SendConn from
// writing a connection ahead of it.
func (h *Handover) serveTaker(c *net.UnixConn) {
	defer h.takers.Done()
	if h.offerTo(c) && h.awaitReady(c) && h.finish() {
		h.sendMu.Lock()
		defer h.sendMu.Unlock()
		h.mu.Lock()
		h.peer = c
		h.mu.Unlock()
		close(h.taken)
		c.SetWriteDeadline(time.Now().Add(writeTimeout))
		c.Write([]byte(okLine))
		return
	}
	c.Close()
	h.mu.Lock()
	h.busy, h.cur = false, nil
	h.mu.Unlock()
}

// offerTo sends c the names and the descriptors.
func (h *Handover) offerTo(c *net.UnixConn) bool {
	var b strings.Builder
	b.WriteString(offerMagic + " " + strconv.Itoa(len(h.names)) + "\n")
	for _, n := range h.names {
		b.WriteString(n + "\n")
	}
	c.SetWriteDeadline(time.Now().Add(writeTimeout))
	scs := make([]syscall.Conn, len(h.lns))
	for i, ln := range h.lns {
		scs[i] = ln.(syscall.Conn)
	}
	return withFDs(scs, func(fds []int) error {
		_, _, err := c.WriteMsgUnix([]byte(b.String()), syscall.UnixRights(fds...), nil)
		return err
	}) == nil
}

// awaitReady reports whether c said it is ready within readyTimeout.
func (h *Handover) awaitReady(c *net.UnixConn) bool {
	c.SetReadDeadline(time.Now().Add(readyTimeout))
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && line == readyLine
}

// finish ends the offer for good, unless Close came first: the control
// socket is removed before the taker hears "ok", so that it may offer at
// the same path.
func (h *Handover) finish() bool {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return false
	}
	h.closed = true
	h.mu.Unlock()
	h.ln.Close()
	return true
}

// withFDs calls f with the descriptors of scs, which stay open meanwhile
// (each one's RawConn.Control holds its own).
func withFDs(scs []syscall.Conn, f func(fds []int) error) error {
	fds := make([]int, 0, len(scs))
	var hold func(i int) error
	hold = func(i int) error {
		if i == len(scs) {
			return f(fds)
		}
		raw, err := scs[i].SyscallConn()
		if err != nil {
			return err
		}
		var ferr error
		if err := raw.Control(func(fd uintptr) {
			fds = append(fds, int(fd))
			ferr = hold(i + 1)
		}); err != nil {
			return err
		}
		return ferr
	}
	return hold(0)
}

// Take connects to the control socket at path, where an old process
// offers its listeners (Offer), and receives them. The caller serves on
// t.Listeners, then calls t.Ready, upon which the old process stops
// accepting and drains; or t.Close, to give up and leave the old
// process serving. ctx bounds the connection and the receipt. Take fails
// with ErrBusy while another process takes them over, and with an error
// wrapping fs.ErrNotExist or syscall.ECONNREFUSED where nobody offers (a
// first start: listen anew).
func Take(ctx context.Context, path string) (*Takeover, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, wrapOp("dial", path, err)
	}
	c := nc.(*net.UnixConn)
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Now()) })
	defer stop()
	lns, err := receive(c)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("restart: Take from %s: %w", path, err)
	}
	c.SetDeadline(time.Time{})
	return &Takeover{Listeners: lns, conn: c}, nil
}

// receive reads the offer: the names, and the descriptors.
func receive(c *net.UnixConn) (map[string]net.Listener, error) {
	buf := make([]byte, maxOffer)
	oob := make([]byte, syscall.CmsgSpace(4*maxListeners))
	n, oobn, flags, _, err := c.ReadMsgUnix(buf, oob)
	if err != nil {
		return nil, err
	}
	fds, ferr := parseRights(oob[:oobn])
	if ferr == nil && flags&syscall.MSG_CTRUNC != 0 {
		ferr = errors.New("descriptors cut short (MSG_CTRUNC)")
	}
	names, err := readNames(c, buf[:n], len(fds))
	if err == nil {
		err = ferr
	}
	if err != nil {
		for _, fd := range fds {
			syscall.Close(fd)
		}
		return nil, err
	}
	lns, err := listenersOf(fds, names)
	if err != nil {
		return nil, err
	}
	m := make(map[string]net.Listener, len(lns))
	for i, ln := range lns {
		m[names[i]] = ln
	}
	return m, nil
}

// parseRights returns the descriptors of the SCM_RIGHTS messages in oob.
func parseRights(oob []byte) ([]int, error) {
	msgs, err := syscall.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, err
	}
	var fds []int
	for _, m := range msgs {
		got, err := syscall.ParseUnixRights(&m)
		if err != nil {
			continue // another kind of message (credentials)
		}
		fds = append(fds, got...)
	}
	return fds, nil
}

// readNames parses the offer's text, whose first bytes are first, reading
// the rest from c where the socket split it; nfds is how many descriptors
// came with it.
func readNames(c *net.UnixConn, first []byte, nfds int) ([]string, error) {
	if string(first) == busyLine {
		return nil, ErrBusy
	}
	r := bufio.NewReader(&prefixed{first: first, c: c})
	head, err := r.ReadString('\n')
	var n int
	if _, serr := fmt.Sscanf(head, offerMagic+" %d\n", &n); err != nil || serr != nil || n < 0 || n > maxListeners {
		return nil, fmt.Errorf("not a hand-over offer (%q)", head)
	}
	names := make([]string, n)
	for i := range names {
		line, err := r.ReadString('\n')
		if err != nil {
			return nil, fmt.Errorf("offer cut short: %w", err)
		}
		names[i] = strings.TrimSuffix(line, "\n")
	}
	if nfds != n {
		return nil, fmt.Errorf("offer of %d listeners came with %d descriptors", n, nfds)
	}
	return names, nil
}

// prefixed reads first, then c.
type prefixed struct {
	first []byte
	c     *net.UnixConn
}

func (p *prefixed) Read(b []byte) (int, error) {
	if len(p.first) > 0 {
		n := copy(b, p.first)
		p.first = p.first[n:]
		return n, nil
	}
	return p.c.Read(b)
}

// Ready tells the old process that this one serves on the listeners, and
// waits (ten seconds at most) for its answer: it has stopped offering, so
// this process may Offer at the same path, and will stop accepting. An
// error means the old process did not answer (it ended, or Close cut the
// offer): it may or may not be accepting still; the listeners are this
// process's either way. Ready or Close, once.
func (t *Takeover) Ready() error {
	c, err := t.ready()
	if err != nil {
		return err
	}
	return c.Close() // the old process's connections stay with it (see ReadyWith)
}

// ready is Ready, leaving the control connection open.
func (t *Takeover) ready() (*net.UnixConn, error) {
	c := t.take()
	if c == nil {
		return nil, fmt.Errorf("restart: Ready after Ready or Close: %w", net.ErrClosed)
	}
	c.SetDeadline(time.Now().Add(ackTimeout))
	if _, err := c.Write([]byte(readyLine)); err != nil {
		c.Close()
		return nil, fmt.Errorf("restart: Ready: %w", err)
	}
	// Exactly the line: what follows may carry descriptors (ReadyWith),
	// which only ReadMsgUnix receives.
	line := make([]byte, len(okLine))
	if _, err := io.ReadFull(c, line); err != nil || string(line) != okLine {
		c.Close()
		return nil, fmt.Errorf("restart: Ready: the old process did not confirm (%q): %w", line, err)
	}
	return c, nil
}

// Close gives up the take-over: the old process keeps serving and
// offering. The listeners are left to the caller, who closes them.
func (t *Takeover) Close() error {
	if c := t.take(); c != nil {
		return c.Close()
	}
	return nil
}

// take returns the control connection, once.
func (t *Takeover) take() *net.UnixConn {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.conn
	t.conn = nil
	return c
}
