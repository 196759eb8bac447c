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
// no worker has its handshake yet (its first record never came whole).
const maxHandshakeInput = 256<<10 + tlsrec.HeaderLen + tlsrec.MaxCiphertext

// beginHandshake starts c's handshake once c is attached: the timeout,
// then reading. A client's handshake goes to the pool at once (it speaks
// first); a server's when its first record (the ClientHello) is whole,
// so that a peer trickling bytes, or sending none, costs no worker.
func (c *Conn) beginHandshake(l *loop.Loop) {
	if c.lp.draining {
		c.closeGracefully(nil)
		return
	}
	hs := c.tlsOf().hs
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
			c.fail(c.opError("read", fmt.Errorf("tls handshake: more than %d bytes buffered", maxHandshakeInput)))
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

// handshakeDone runs on c's loop when the pool's handshake of c returned
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
		c.tlsOf().hs = nil
		if !c.lbits.has(bClosing) {
			c.closeGracefully(err)
		}
		return
	}
	// What arrived after the peer's last handshake record waits for the
	// record layer, ahead of what the loop receives next.
	t := c.tlsOf()
	c.in = c.lp.e.inputs.append(c.in, t.tr.EndHandshake())
	t.done, t.hs, t.hold = true, nil, false
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

// handshaking reports whether a worker has c's handshake (queued or
// running). Loop goroutine.
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

// handshakePool runs TLS handshakes on at most max goroutines, started
// when connections wait and ended when none does. The handshake is
// crypto/tls's blocking Handshake: a worker holds a connection from its
// first whole record to its last handshake message, or to its
// Options.HandshakeTimeout, whichever comes first.
type handshakePool struct {
	max     int
	mu      sync.Mutex
	queue   []*Conn
	running int
	wg      sync.WaitGroup
}

func (p *handshakePool) submit(c *Conn) {
	p.mu.Lock()
	p.queue = append(p.queue, c)
	start := p.running < p.max
	if start {
		p.running++
		p.wg.Add(1)
	}
	p.mu.Unlock()
	if start {
		go p.work()
	}
}

// work handshakes with queued connections until none is left.
func (p *handshakePool) work() {
	defer p.wg.Done()
	for {
		p.mu.Lock()
		if len(p.queue) == 0 {
			p.running--
			p.queue = nil // drop the grown array
			p.mu.Unlock()
			return
		}
		c := p.queue[0]
		p.queue[0] = nil
		p.queue = p.queue[1:]
		p.mu.Unlock()
		if c.tlsOf().dead.Load() {
			continue // timed out, or closed, while it waited: no work for a dead conn
		}
		err := c.tlsOf().tc.Handshake()
		c.post(&handshakeDoneTask{c: c, err: err})
	}
}

// wait waits for the workers to end: once the loops stopped, every
// connection closed and no handshake waits for input.
func (p *handshakePool) wait() { p.wg.Wait() }
