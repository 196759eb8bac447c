package soak

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// A plan is what one client connection does, drawn from the worker's
// PRNG: the messages it sends, with pauses between them, and how it
// ends.
type plan struct {
	key  stream    // the bytes it sends
	msgs []message // may be none: open, then end at once
	end  ending
	// resetAt is, for endReset, after how many bytes of the stream the
	// connection is reset: anywhere from 0 to all of them, often in the
	// middle of a message, with echoes in flight.
	resetAt int64
}

// message is one write of the plan.
type message struct {
	size  int           // bytes, 1 B to maxMessage, log-uniform
	wait  bool          // wait for its whole echo before going on
	pause time.Duration // idle time after it (and after its echo, if wait)
}

// ending is how a connection ends.
type ending int

const (
	endClose     ending = iota // wait for every echo, then close
	endHalfClose               // shut the write side, read the echo to EOF, close
	endReset                   // SO_LINGER 0 and close: an RST, mid-transfer
)

func (e ending) String() string {
	return [...]string{"close", "half-close", "reset"}[e]
}

// The mix. Message sizes and counts and pause lengths are log-uniform, so
// every order of magnitude is as likely as the next: 1-byte and 1-MiB
// messages both occur, and a connection lives for one message or for
// many. The figures are in the report's header.
const (
	maxMessage  = 1 << 20              // bytes
	maxMessages = 64                   // per connection
	pNoMessage  = 0.10                 // open and end at once: accept/close churn
	pWait       = 0.5                  // wait for a message's echo before the next
	pPause      = 0.15                 // idle after a message
	minPause    = 2 * time.Millisecond // pauses are log-uniform between these
	maxPause    = 1000 * time.Millisecond
	pHalfClose  = 0.20
	pReset      = 0.25 // the rest, 0.55, close
)

// newPlan draws a connection's plan from r.
func newPlan(r *rand.Rand) plan {
	p := plan{key: stream(r.Uint64())}
	if r.Float64() >= pNoMessage {
		n := int(logUniform(r, 1, maxMessages+1))
		for range n {
			m := message{size: int(logUniform(r, 1, maxMessage+1)), wait: r.Float64() < pWait}
			if r.Float64() < pPause {
				m.pause = time.Duration(logUniform(r, float64(minPause), float64(maxPause)))
			}
			p.msgs = append(p.msgs, m)
		}
	}
	switch x := r.Float64(); {
	case x < pReset:
		p.end = endReset
		p.resetAt = r.Int64N(p.total() + 1)
	case x < pReset+pHalfClose:
		p.end = endHalfClose
	}
	return p
}

// String describes the plan, for test messages.
func (p plan) String() string {
	return fmt.Sprintf("%d messages, %d bytes, %v at %d", len(p.msgs), p.total(), p.end, p.resetAt)
}

// total is how many bytes the messages add up to.
func (p plan) total() int64 {
	var n int64
	for _, m := range p.msgs {
		n += int64(m.size)
	}
	return n
}

// logUniform returns x in [lo, hi) with log x uniform, truncated to at
// most hi's floor by the callers' conversions.
func logUniform(r *rand.Rand, lo, hi float64) float64 {
	x := lo * math.Exp(r.Float64()*math.Log(hi/lo))
	return min(x, math.Nextafter(hi, lo))
}
