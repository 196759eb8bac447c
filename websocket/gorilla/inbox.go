package gorilla

import (
	"sync"
	"time"

	"github.com/galeio/gale/websocket"
)

// The bounds of a connection's inbox: past maxInbox bytes of received
// data not yet read, the loop stops reading the connection (TCP's flow
// control then holds the peer back), and it reads again once the reader
// brought the inbox down to resumeInbox. What the loop delivers after it
// was told to stop is at most one piece (what one receive brought, or 16
// KiB of a compressed message), so a connection holds at most about
// maxInbox plus one receive of unread data.
const (
	maxInbox    = 64 << 10
	resumeInbox = maxInbox / 2
)

// itemKind is what an inbox item brings.
type itemKind uint8

const (
	itemStart itemKind = iota // a message begins: typ
	itemData                  // a piece of it: data, final
	itemPing                  // data
	itemPong                  // data
	itemEnd                   // the connection ended: err
)

type item struct {
	kind  itemKind
	typ   int
	final bool
	data  []byte
	err   error
}

// inbox is the queue between a connection's loop, which pushes what it
// received, and its reader, which pops it, blocking while it is empty.
type inbox struct {
	mu       sync.Mutex
	items    []item
	head     int
	n        int       // the data bytes queued
	paused   bool      // the loop was told to stop reading
	deadline time.Time // the reader's; the zero time for none
	wake     chan struct{}
}

// push queues it, and stops the loop reading ws once the inbox is full.
// It runs on the loop.
func (q *inbox) push(ws *websocket.Conn, it item) {
	q.mu.Lock()
	q.items = append(q.items, it)
	q.n += len(it.data)
	if !q.paused && q.n >= maxInbox {
		q.paused = true
		ws.PauseRead() // posts a task: does not wait
	}
	q.mu.Unlock()
	q.signal()
}

// signal wakes the reader, if it waits.
func (q *inbox) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// pop takes the first item, if any, and lets the loop read again once
// the inbox is down to resumeInbox. ok is false for an empty inbox; then
// deadline is the reader's.
func (q *inbox) pop(ws *websocket.Conn) (it item, deadline time.Time, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.head == len(q.items) {
		return item{}, q.deadline, false
	}
	it = q.items[q.head]
	q.items[q.head] = item{}
	q.head++
	if q.head == len(q.items) {
		q.items, q.head = q.items[:0], 0
	}
	q.n -= len(it.data)
	if q.paused && q.n <= resumeInbox {
		q.paused = false
		ws.ResumeRead()
	}
	return it, time.Time{}, true
}

// setDeadline sets the reader's deadline, waking a reader that waits so
// that it sees it.
func (q *inbox) setDeadline(t time.Time) {
	q.mu.Lock()
	q.deadline = t
	q.mu.Unlock()
	q.signal()
}
