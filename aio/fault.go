package aio

import (
	"fmt"

	"github.com/galeio/gale/internal/loop"
)

// fault runs on lp's loop when its backend failed: the loop can serve
// nothing more. Its connections are released there, every pending request
// completing with the failure, and the whole watcher stops with it (Err):
// a watcher missing a loop would leave a share of its connections
// unserved for good.
func (lp *loopState) fault(l *loop.Loop, err error) {
	err = fmt.Errorf("aio: event loop failed: %w", err)
	lp.stop(l, err)
	go lp.w.stop(err)
}

// strand takes the head of q, whose operation is in flight, out of c's
// queue and keeps it, completed with err, for watcher.stop to deliver.
func (c *conn) strand(l *loop.Loop, q *reqQueue, err error) {
	r := q.head
	q.remove(r)
	if r.tm != nil {
		l.Unschedule(&r.tm.t)
	}
	c.lp.pending(r.kind, -1)
	r.err = err
	c.lp.stranded = append(c.lp.stranded, r)
}
