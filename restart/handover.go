package restart

import (
	"errors"
	"net"
	"sync"
	"time"
)

// The hand-over's exchange, on a Unix stream socket (conns_unix.go has
// the connections that may follow):
//
//	old → new  "gale-restart/1 <n>\n" then n names, each "\n"-ended, with
//	           the n listening descriptors in one SCM_RIGHTS message, in
//	           the names' order; or "busy\n" while another taker is served
//	new → old  "ready\n", once it serves on them
//	old → new  "ok\n": the old process has stopped offering (its control
//	           socket is gone) and will stop accepting
//
// A taker that closes the connection, or says nothing within
// readyTimeout, before "ready" leaves the old process serving and
// offering.
const (
	offerMagic = "gale-restart/1"
	busyLine   = "busy\n"
	readyLine  = "ready\n"
	okLine     = "ok\n"

	// maxListeners is what one SCM_RIGHTS message may carry: Linux's
	// SCM_MAX_FD is 253 (include/net/scm.h).
	maxListeners = 253
	maxOffer     = 64 << 10 // the names' bytes, at most
	readyTimeout = 2 * time.Minute
	ackTimeout   = 10 * time.Second
	writeTimeout = 10 * time.Second
)

// ErrBusy is returned by Take when another process is taking the
// listeners over from the same old process, and by Offer when a running
// process offers on the path already.
var ErrBusy = errors.New("restart: a hand-over is under way")

// Handover offers a process's listeners on a Unix control socket until a
// new process has taken them and is serving on them (see Offer). Its
// methods are safe from any goroutine.
type Handover struct {
	path  string
	ln    *net.UnixListener
	names []string
	lns   []net.Listener
	taken chan struct{} // closed once a taker said it is ready
	done  chan struct{} // closed once the accept loop returned

	mu     sync.Mutex
	closed bool          // Close was called, or the listeners were taken; under mu
	busy   bool          // a taker is being served; under mu
	cur    *net.UnixConn // the taker being served; under mu
	peer   *net.UnixConn // the taker that is ready, for SendConn; under mu
	sendMu sync.Mutex    // one SendConn at a time, and Close after them
	takers sync.WaitGroup
}

// Taken returns a channel closed once a new process has taken the
// listeners and said it serves on them. Then the old process stops
// accepting (closes its listeners: the new process keeps the sockets
// open) and drains its connections (httpd.Server.Shutdown), and exits.
// The control socket is gone by then, so the new process may offer on
// the same path.
func (h *Handover) Taken() <-chan struct{} { return h.taken }

// Close stops offering and removes the control socket, unless the
// listeners were taken already; it waits for the accept loop to return,
// and a taker being served is cut off (its Take or Ready fails). Once
// they were taken, it tells the new process that no more connections
// come (SendConn): a process that hands its idle connections over calls
// it after its server's Shutdown. It does not close the listeners
// offered. A second Close returns nil.
func (h *Handover) Close() error {
	h.mu.Lock()
	was := h.closed
	h.closed = true
	var err error
	cur := h.cur
	h.mu.Unlock()
	if !was {
		err = h.ln.Close()
		if cur != nil {
			cur.Close() // a taker being served, not ready yet: cut off
		}
	}
	<-h.done
	h.sendMu.Lock()
	defer h.sendMu.Unlock()
	h.mu.Lock()
	peer := h.peer
	h.peer = nil
	h.mu.Unlock()
	if peer != nil {
		h.endConns(peer) // the taker that is ready: no more connections come
	}
	return err
}

// Takeover holds the listeners taken over from an old process, and the
// connection to it, until Ready or Close. Its methods are safe from any
// goroutine.
type Takeover struct {
	// Listeners are the old process's listeners, by name: this process
	// owns them (Listen takes them out one by one).
	Listeners map[string]net.Listener

	mu   sync.Mutex
	conn *net.UnixConn // nil after Ready or Close; under mu

	connsDone chan struct{} // ReadyWith's receiving goroutine ended
	connsErr  error         // why, set before connsDone is closed
}

// doneTag begins the header that ends the connections handed over.
const doneTag = 'D'

// endConns tells the taker no more connections come, and lets the
// control connection go. h.sendMu is held.
func (h *Handover) endConns(c *net.UnixConn) {
	c.SetWriteDeadline(time.Now().Add(writeTimeout))
	c.Write([]byte{doneTag, 0, 0, 0, 0})
	c.Close()
}
