package tlsrec

import (
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// ErrWouldBlock is what a non-blocking Transport's Read returns when the
// records offered are used up: a net.Error whose Temporary is true, which
// crypto/tls returns from tls.Conn.Read without making it sticky.
var ErrWouldBlock error = wouldBlock{}

type wouldBlock struct{}

func (wouldBlock) Error() string   { return "tlsrec: no whole record buffered" }
func (wouldBlock) Timeout() bool   { return false }
func (wouldBlock) Temporary() bool { return true }

// Transport is the net.Conn under a tls.Conn driven by a loop.
//
// Feed, Close and Read may be called from any goroutine. Offer and the
// non-blocking Read it serves belong to the loop: the loop calls Offer,
// then tls.Conn.Read, on its own goroutine. Write calls the send function
// given to New from the goroutine that writes to the tls.Conn; it must
// not block.
type Transport struct {
	send         func([]byte) (int, error)
	laddr, raddr net.Addr

	blocking atomic.Bool // Read waits for Feed (the handshake)

	mu sync.Mutex
	hs *handshakeInput // nil once EndHandshake ran, so an idle conn keeps none of it

	// Non-blocking mode, loop-owned.
	src  []byte // offered whole records not yet read
	left int    // bytes of src's first record not yet read
}

// handshakeInput is what a Transport needs only during the handshake;
// guarded by the Transport's mu.
type handshakeInput struct {
	// Called by the handshake's Read around a wait (SetWaitHooks); set
	// before the handshake starts.
	release, acquire func()

	ready   sync.Cond // signalled by Feed and Close
	pending []byte    // bytes fed and not yet read
	split   splitter  // re-frames what is fed into small records
	hsLeft  int       // bytes of pending's first record not yet read
	err     error     // set by Close: Read returns it once pending is read
}

// New returns a blocking Transport (for the handshake) that writes with
// send. send is called with each record crypto/tls writes, and must take
// it whole (queue what the socket refuses) or fail for good.
func New(send func([]byte) (int, error), laddr, raddr net.Addr) *Transport {
	t := &Transport{send: send, laddr: laddr, raddr: raddr, hs: new(handshakeInput)}
	t.hs.ready.L = &t.mu
	t.blocking.Store(true)
	return t
}

// SetWaitHooks makes a blocking Read that must wait for Feed call
// release first, and acquire before it returns the bytes fed, both on the
// Read's goroutine and without t's lock held. A Read that Close ends
// returns its error without calling acquire. An engine gives back, while
// the peer is silent, the share of its CPU a handshake holds. Call it
// before the handshake starts.
func (t *Transport) SetWaitHooks(release, acquire func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.hs.release, t.hs.acquire = release, acquire
}

// Feed appends bytes the loop received during the handshake, copying
// them, and wakes a waiting Read. It returns how many bytes are buffered
// and unread. The peer's plaintext handshake records are cut into
// records of at most 512 bytes on the way (see splitter), so that the
// tls.Conn's input buffer, which never shrinks, stays small. Feeding a
// Transport after EndHandshake is a misuse: it panics.
func (t *Transport) Feed(b []byte) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.hs == nil {
		panic("tlsrec: Feed after EndHandshake")
	}
	t.hs.pending = t.hs.split.add(t.hs.pending, b)
	t.hs.ready.Signal()
	return len(t.hs.pending)
}

// Buffered returns the bytes fed and not yet read: none after
// EndHandshake.
func (t *Transport) Buffered() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.hs == nil {
		return 0
	}
	return len(t.hs.pending)
}

// EndHandshake switches t to non-blocking reads and returns the bytes
// fed that the handshake did not read: the loop offers them, as whole
// records, to tls.Conn.Read. Call it once the handshake has returned.
// It drops what only the handshake needed (buffers, the wait hooks and
// what they refer to), so a Transport then holds little more than what
// is offered.
func (t *Transport) EndHandshake() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	var rest []byte
	if t.hs != nil {
		rest = t.hs.pending
	}
	t.hs = nil
	t.blocking.Store(false)
	return rest
}

// Offer makes b, which holds whole records (see Complete), what the next
// Reads return. Read serves each record only up to its end, so a
// tls.Conn never holds more than the record it is decrypting. The loop
// goroutine only, after EndHandshake; b must stay unchanged until Read
// has returned ErrWouldBlock.
func (t *Transport) Offer(b []byte) {
	t.src, t.left = b, 0
}

// Unread returns how many offered bytes Read has not returned yet.
func (t *Transport) Unread() int { return len(t.src) }

// Read returns fed bytes (blocking mode: waits for Feed or Close) or
// offered ones (otherwise: ErrWouldBlock when none is left).
func (t *Transport) Read(p []byte) (int, error) {
	if !t.blocking.Load() {
		return t.readOffered(p)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.hs.read(p, &t.mu)
}

// read is a blocking Read of what was fed; mu, t's lock, is held.
func (h *handshakeInput) read(p []byte, mu *sync.Mutex) (int, error) {
	released := false
	for !h.readable() && h.err == nil {
		if h.release != nil && !released {
			released = true
			mu.Unlock()
			h.release()
			mu.Lock()
			continue // fed meanwhile, perhaps
		}
		h.ready.Wait()
	}
	if len(h.pending) == 0 {
		return 0, h.err // the handshake ends: no slot needed for that
	}
	if released {
		// Only this Read consumes pending: what it found stays.
		mu.Unlock()
		h.acquire()
		mu.Lock()
	}
	if h.hsLeft == 0 {
		h.hsLeft = len(h.pending) // the peer closed mid-header
		if len(h.pending) >= HeaderLen {
			h.hsLeft = recordLen(h.pending)
		}
	}
	n := copy(p[:min(len(p), h.hsLeft)], h.pending)
	h.pending, h.hsLeft = h.pending[n:], h.hsLeft-n
	if len(h.pending) == 0 {
		h.pending = nil // the next Feed starts a new array
	}
	return n, nil
}

// readable reports whether a blocking Read can return bytes: a header at
// a record's start (so that Read can stop at the record's end as
// readOffered does), or the rest of a record begun. The Transport's mu
// is held.
func (h *handshakeInput) readable() bool {
	return len(h.pending) > 0 && (h.hsLeft > 0 || len(h.pending) >= HeaderLen)
}

func (t *Transport) readOffered(p []byte) (int, error) {
	if len(t.src) == 0 {
		return 0, ErrWouldBlock
	}
	if t.left == 0 {
		// Whole records are offered, so src starts with a header; if it
		// does not, left only splits the copy where it need not.
		t.left = len(t.src)
		if len(t.src) >= HeaderLen {
			t.left = min(recordLen(t.src), len(t.src))
		}
	}
	n := copy(p[:min(len(p), t.left)], t.src)
	t.src, t.left = t.src[n:], t.left-n
	return n, nil
}

// Write hands b to the send function.
func (t *Transport) Write(b []byte) (int, error) { return t.send(b) }

// Close ends a blocking Read waiting for the handshake's input: it
// returns err (net.ErrClosed if nil) once what was fed is read. The loop
// closes the socket itself.
func (t *Transport) Close() error { return t.CloseWith(nil) }

// CloseWith is Close with the error Read returns.
func (t *Transport) CloseWith(err error) error {
	if err == nil {
		err = net.ErrClosed
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.hs == nil {
		return nil // no Read waits: the handshake is over
	}
	if t.hs.err == nil {
		t.hs.err = err
	}
	t.hs.ready.Broadcast()
	return nil
}

// LocalAddr returns the local address given to New.
func (t *Transport) LocalAddr() net.Addr { return t.laddr }

// RemoteAddr returns the remote address given to New.
func (t *Transport) RemoteAddr() net.Addr { return t.raddr }

// SetDeadline does nothing: the loop owns the connection's deadlines
// (crypto/tls sets a write deadline around close_notify, which the
// Transport's Write never waits on).
func (t *Transport) SetDeadline(time.Time) error { return nil }

// SetReadDeadline does nothing: see SetDeadline.
func (t *Transport) SetReadDeadline(time.Time) error { return nil }

// SetWriteDeadline does nothing: see SetDeadline.
func (t *Transport) SetWriteDeadline(time.Time) error { return nil }

// IsWouldBlock reports whether err is ErrWouldBlock, as tls.Conn.Read
// returns it.
func IsWouldBlock(err error) bool { return errors.Is(err, ErrWouldBlock) }

// Ready reports whether the bytes fed start with what a handshake can
// act on without waiting for its peer: a whole first handshake message
// (a server's ClientHello, however many records carry it), or bytes
// crypto/tls refuses at once: a first byte that is not a handshake
// record's (an HTTP request sent to a TLS port), a record header no
// record can follow, a message header announcing more than
// MaxFirstMessage.
func (t *Transport) Ready() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.hs == nil || t.hs.split.ready()
}

// recordTypeHandshake is the content type of handshake records.
const recordTypeHandshake = 22
