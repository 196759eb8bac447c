package engine

import (
	"fmt"

	"github.com/galeio/gale/internal/loop"
)

// fault runs on lp's loop when its backend failed: the loop can serve
// nothing more. Its listeners and connections are closed there (each
// connection's OnClose gets the failure), and the whole engine stops, with
// the failure as its Err: an engine missing a loop would leave a share of
// its connections unserved for good.
func (lp *eloop) fault(l *loop.Loop, err error) {
	err = fmt.Errorf("engine: event loop %d failed: %w", lp.idx, err)
	lp.dead = true
	e := lp.e
	e.mu.Lock()
	if e.err == nil {
		e.err = err
	}
	var lns []*listener
	for _, ln := range e.listeners {
		if ln.lp == lp {
			lns = append(lns, ln)
		}
	}
	e.mu.Unlock()
	for _, ln := range lns {
		ln.shut(l)
	}
	lp.eachConn(func(c *Conn) { c.fail(err) })
	go e.Stop() // the other loops: Stop waits for them
}
