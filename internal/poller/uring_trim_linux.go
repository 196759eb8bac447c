package poller

import (
	"time"

	"github.com/galeio/gale/internal/uring"
)

// trimAfter is how long a loop must have received nothing through its
// provided buffers before it gives their pages back (idleTrim).
var trimAfter = time.Second

// bufTrim is what idleTrim keeps: counts of the buffers the kernel filled
// (touches, bumped by consumed), and when the count last moved.
type bufTrim struct {
	touches uint64    // provided buffers filled and consumed, ever
	seen    uint64    // touches when the loop last went to wait
	seenAt  time.Time // when seen last changed
	trimmed uint64    // touches at the last trim: equal, the pages are given back
	done    int       // trims made (tests)
}

// idleTrim runs before a wait that may block (timeout not 0). Once the
// loop has received nothing through the ring for trimAfter, it gives the
// provided buffers' pages (up to 2 MiB a loop) and the spill spares back,
// so that an idle server holds only what its connections keep; until then
// it shortens the wait so that a loop gone quiet wakes to do it. The
// trim needs a settled ring (uring.Ring.Settled): every byte the kernel
// put in a buffer was named by a completion already served and copied or
// consumed, and the kernel writes no buffer before this loop's next
// io_uring_enter(2). An unbound ring is never settled: its buffers stay.
func (b *uringBackend) idleTrim(timeout time.Duration) time.Duration {
	t := &b.trim
	if t.trimmed == t.touches || b.r.Flags()&uring.SetupDeferTaskrun == 0 {
		return timeout // given back already, or never filled; or a ring that cannot settle
	}
	now := time.Now()
	if t.touches != t.seen {
		t.seen, t.seenAt = t.touches, now
	}
	left := trimAfter - now.Sub(t.seenAt)
	if left <= 0 && b.r.Settled() {
		b.giveBack()
		return timeout
	}
	if left <= 0 {
		left = trimAfter // completions to collect first: try at the next wait
	}
	if timeout < 0 || timeout > left {
		return left
	}
	return timeout
}

// giveBack trims the provided buffers and drops the spill spares. A
// failed madvise(2) keeps the pages, and the loop tries again only after
// its next receive.
func (b *uringBackend) giveBack() {
	b.trim.trimmed = b.trim.touches
	if b.br.Trim() != nil {
		return
	}
	b.trim.done++
	clear(b.spares)
	b.spares, b.spareCap = b.spares[:0], 0
}
