package websocket

import (
	"time"

	"github.com/galeio/gale/engine"
)

// AcceptKeyForTest exposes acceptKey to the external tests.
var AcceptKeyForTest = acceptKey

// The defaults that Options and Dialer document, for the limits tests.
const (
	DefaultCloseTimeoutForTest     = defaultCloseTimeout
	DefaultHandshakeTimeoutForTest = defaultHandshakeTimeout
	MaxResponseHeadForTest         = maxResponseHead
)

// WindowCapForTest returns the capacity of c's context-takeover window,
// read on c's loop: -1 when c keeps none, -2 when the loop did not answer.
func WindowCapForTest(c *Conn) int {
	ch := make(chan int, 1)
	err := c.ec().Execute(func(*engine.Conn) {
		n := -1
		if pmd := c.deflate(); pmd != nil && pmd.win != nil {
			n = cap(pmd.win.buf)
		}
		ch <- n
	})
	if err != nil {
		return -2
	}
	select {
	case n := <-ch:
		return n
	case <-time.After(10 * time.Second):
		return -2
	}
}
