package engine

import (
	"fmt"
	"sync"

	"github.com/galeio/gale/internal/loop"
	"github.com/galeio/gale/internal/tlsrec"
)

// maxHandshakeInput bounds what a connection's handshake holds unread:
// the largest handshake message crypto/tls accepts (a certificate chain,
// 256 KiB) and a record's framing. Past it the loop stops reading the
// connection until the handshake ends (a client may stream data right
// after its Finished, before a busy pool has read it), or closes it if
// its handshake has not started (its first message never came whole:
// tlsrec.MaxFirstMessage bounds that message, so only a peer that frames
// it in tiny records gets there).
const maxHandshakeInput = 256<<10 + tlsrec.HeaderLen + tlsrec.MaxCiphertext

// beginHandshake starts c's handshake once c is attached: the timeout,
// then reading. A client's handshake goes to the pool at once (it speaks
// first); a server's once its first message (the ClientHello) is whole,
// however many records carry it, so that a peer that trickles it, or
// sends none, costs no goroutine: the loop holds its bytes.
func (c *Conn) beginHandshake(l *loop.Loop) {
	hs := c.tlsOf().hs
	c.lp.countHandshake(hs)
	if c.lp.draining {
		c.closeGracefully(nil)
		return
	}
	l.Schedule(&hs.timer, l.Now().Add(c.lp.e.opts.HandshakeTimeout))
	if hs.client {
		c.queueHandshake()
	}
	c.startRead()
}

// feedHandshake passes received bytes to the handshake. Loop goroutine.
func (c *Conn) feedHandshake(data []byte) {
	t := c.tlsOf()
	if len(data) > 0 && t.tr.Feed(data) > maxHandshakeInput {
		if !t.hs.queued {
			c.fail(c.opError("read", fmt.Errorf("tls handshake: more than %d bytes buffered: %w", maxHandshakeInput, ErrInputBufferFull)))
			return
		}
		t.hold = true // startRead waits for the handshake's end
	}
	if !t.hs.queued && t.tr.Ready() {
		c.queueHandshake()
	}
}

func (c *Conn) queueHandshake() {
	c.tlsOf().hs.queued = true
	c.lp.e.hs.submit(c)
}

// handshakeExpired fires Options.HandshakeTimeout after c was attached.
func (c *Conn) handshakeExpired() {
	if !c.lbits.has(bClosed) && c.tlsOf().hs != nil {
		c.fail(ErrHandshakeTimeout)
	}
}

// handshakeDone runs on c's loop when the handshake of c returned
// err: c is opened, or closed with the error (after the alert crypto/tls
// queued for the peer).
func (c *Conn) handshakeDone(err error) {
	hs := c.tlsOf().hs
	if c.lbits.has(bClosed) || hs == nil {
		return
	}
	c.lp.l.Unschedule(&hs.timer)
	if err != nil {
		err = c.opError("tls handshake", err)
		hs.report(err)
		c.tlsOf().endHandshake()
		if !c.lbits.has(bClosing) {
			c.closeGracefully(err)
		}
		return
	}
	// What arrived after the peer's last handshake record waits for the
	// record layer, ahead of what the loop receives next.
	t := c.tlsOf()
	c.in = c.lp.e.inputs.append(c.in, t.tr.EndHandshake())
	t.endHandshake()
	t.done, t.hold = true, false
	t.est.Store(true)
	if c.lbits.has(bClosing) {
		return
	}
	c.open()
	hs.report(nil)
	if c.lbits.has(bEOF) && !c.lbits.has(bClosed|bClosing) {
		c.peerClosed() // the stream ended during the handshake, after its last record
	}
}

// handshaking reports whether c's handshake was handed to the pool
// (queued or running). Loop goroutine.
func (t *tlsState) handshaking() bool { return t.hs != nil && t.hs.queued }

// report tells DialTLS how the handshake ended.
func (hs *handshake) report(err error) {
	if hs.result != nil {
		hs.result <- err
	}
}

// handshakeDoneTask delivers a handshake's end to its connection's loop.
type handshakeDoneTask struct {
	c   *Conn
	err error
}

func (t *handshakeDoneTask) Run(*loop.Loop) { t.c.handshakeDone(t.err) }

// handshakePool bounds the TLS handshakes that compute at once, not
// those that wait. A handshake is crypto/tls's blocking Handshake: it runs
// on a goroutine of its own, started when it can take a slot and ended
// with it (as net/http's goroutine per connection is), and holds one of
// max slots only while it computes. When its Transport must wait for the
// peer, the slot goes back to the pool (tlsrec.Transport.SetWaitHooks),
// and the goroutine takes one again once bytes came. So a handshake whose
// peer is silent holds a goroutine but no slot, and one that has not
// started (queued, its first message whole) holds neither.
//
// Slots freed go first to handshakes that resume, then to new ones, each
// in arrival order: a handshake under way has its peer and its timeout
// waiting, and finishing it frees its goroutine.
type handshakePool struct {
	max     int
	mu      sync.Mutex
	busy    int            // slots held
	resumed []*hsSlot      // goroutines whose peer answered, waiting for a slot
	fresh   []*Conn        // handshakes not started, waiting for a slot
	wg      sync.WaitGroup // handshake goroutines
}

// hsSlot is one handshake goroutine's hold on its pool's slots; its
// methods are the Transport's wait hooks, called on that goroutine.
type hsSlot struct {
	p    *handshakePool
	held bool
	wake chan struct{} // a slot handed over; made on the first wait for one
}

func (s *hsSlot) release() {
	if s.held {
		s.held = false
		s.p.release()
	}
}

func (s *hsSlot) acquire() {
	if !s.held {
		s.p.acquire(s)
		s.held = true
	}
}

// submit starts c's handshake now if a slot is free, or queues it.
func (p *handshakePool) submit(c *Conn) {
	p.mu.Lock()
	if p.busy == p.max {
		p.fresh = append(p.fresh, c)
		p.mu.Unlock()
		return
	}
	p.busy++
	p.wg.Add(1)
	p.mu.Unlock()
	go p.run(c)
}

// run handshakes with c, holding a slot, and reports to c's loop.
func (p *handshakePool) run(c *Conn) {
	defer p.wg.Done()
	t := c.tlsOf()
	s := &hsSlot{p: p, held: true}
	t.tr.SetWaitHooks(s.release, s.acquire)
	err := c.handshake(t)
	s.release()
	c.post(&handshakeDoneTask{c: c, err: err})
}

// handshake runs crypto/tls's handshake for c. A tls.Config callback
// (GetCertificate, VerifyPeerCertificate...) that panics fails the
// handshake with a *PanicError, as a callback on a loop ends only its
// connection, unless Options.CrashOnPanic. Handshake goroutine.
func (c *Conn) handshake(t *tlsState) (err error) {
	defer c.lp.e.containHandshake(c, &err)
	return t.tc.Handshake()
}

// acquire waits for a slot for s, whose peer answered.
func (p *handshakePool) acquire(s *hsSlot) {
	p.mu.Lock()
	if p.busy < p.max {
		p.busy++
		p.mu.Unlock()
		return
	}
	if s.wake == nil {
		s.wake = make(chan struct{}, 1)
	}
	p.resumed = append(p.resumed, s)
	p.mu.Unlock()
	<-s.wake
}

// release gives a slot back: to a resuming handshake, else to a new one
// (whose goroutine starts), else to the pool.
func (p *handshakePool) release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.resumed) > 0 {
		s := p.resumed[0]
		p.resumed[0] = nil
		p.resumed = p.resumed[1:]
		s.wake <- struct{}{} // buffered: s waits for it alone
		return
	}
	for len(p.fresh) > 0 {
		c := p.fresh[0]
		p.fresh[0] = nil
		p.fresh = p.fresh[1:]
		if c.tlsOf().dead.Load() {
			continue // timed out, or closed, while it waited: no work for a dead conn
		}
		p.wg.Add(1)
		go p.run(c)
		return
	}
	p.busy--
	p.resumed, p.fresh = nil, nil // drop the grown arrays
}

// wait waits for the handshake goroutines to end: once the loops stopped,
// every connection closed and no handshake waits for input.
func (p *handshakePool) wait() { p.wg.Wait() }
