package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/galeio/gale/websocket"
)

// msgKey names a message: its sender and its number.
type msgKey struct {
	client string
	seq    uint64
}

// chatClient is a test's chat client. It keeps one connection open,
// reconnecting at once when it ends, and resumes from the last message it
// received. Every message it sends stays in unacked until the server
// acknowledges it, and is resent on each new connection until then.
type chatClient struct {
	name string
	url  string
	d    *websocket.Dialer
	// pause is the time it waits before reconnecting, as a client on a
	// slow network would: messages are sent meanwhile, and it must be
	// sent them from the history when it is back.
	pause time.Duration

	mu         sync.Mutex
	conn       *websocket.Conn // nil between connections
	welcomed   bool            // conn's welcome came
	lastID     string          // the last stream ID received
	seq        uint64          // the last message's number
	unacked    map[uint64]string
	got        map[msgKey]int // received, by message, with repeats
	reconnects int
	resent     int
	closes     map[websocket.StatusCode]int // by close code
	dialErrs   int
}

// connState is one connection's value: its client, and done, closed by
// OnClose.
type connState struct {
	cl   *chatClient
	done chan struct{}
}

// clientHandler is the clients' websocket.Handler.
type clientHandler struct{ websocket.BaseHandler }

func newClient(name, url string, d *websocket.Dialer) *chatClient {
	return &chatClient{name: name, url: url, d: d, unacked: map[uint64]string{}, got: map[msgKey]int{}, closes: map[websocket.StatusCode]int{}}
}

// run keeps the client connected until ctx ends.
func (cl *chatClient) run(ctx context.Context) {
	for first := true; ctx.Err() == nil; first = false {
		st := &connState{cl: cl, done: make(chan struct{})}
		dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		c, _, err := cl.d.DialWith(dctx, cl.url, st)
		cancel()
		if err != nil {
			cl.mu.Lock()
			cl.dialErrs++
			cl.mu.Unlock()
			select {
			case <-ctx.Done():
			case <-time.After(50 * time.Millisecond):
			}
			continue
		}
		cl.mu.Lock()
		if !first {
			cl.reconnects++
		}
		cl.conn, cl.welcomed = c, false
		hello := event{Type: "hello", ID: cl.lastID}
		cl.mu.Unlock()
		c.WriteMessage(websocket.TextMessage, encode(hello))
		select {
		case <-st.done:
		case <-ctx.Done():
			c.CloseNow()
			<-st.done
		}
		cl.mu.Lock()
		cl.conn = nil
		cl.mu.Unlock()
		select {
		case <-ctx.Done():
		case <-time.After(cl.pause):
		}
	}
}

func (clientHandler) OnMessage(c *websocket.Conn, typ websocket.MessageType, data []byte) {
	var ev event
	if err := json.Unmarshal(data, &ev); err != nil {
		c.Close(websocket.StatusPolicyViolation, "not JSON")
		return
	}
	cl := c.Context().(*connState).cl
	cl.mu.Lock()
	defer cl.mu.Unlock()
	switch ev.Type {
	case "welcome":
		cl.welcomed = true
		cl.lastID = ev.ID
		for _, seq := range slices.Sorted(maps.Keys(cl.unacked)) {
			c.WriteMessage(websocket.TextMessage, encode(event{Type: "msg", Client: cl.name, Seq: seq, Text: cl.unacked[seq]}))
			cl.resent++
		}
	case "ack":
		delete(cl.unacked, ev.Seq)
	case "msg":
		cl.got[msgKey{ev.Client, ev.Seq}]++
		cl.lastID = ev.ID
	}
}

func (clientHandler) OnClose(c *websocket.Conn, err error) {
	st := c.Context().(*connState)
	st.cl.mu.Lock()
	st.cl.closes[websocket.CloseStatus(err)]++
	st.cl.mu.Unlock()
	close(st.done)
}

// send sends the next message, now if connected, else on the next welcome.
func (cl *chatClient) send() {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	cl.seq++
	text := fmt.Sprintf("%s says %d", cl.name, cl.seq)
	cl.unacked[cl.seq] = text
	if cl.conn != nil && cl.welcomed {
		cl.conn.WriteMessage(websocket.TextMessage, encode(event{Type: "msg", Client: cl.name, Seq: cl.seq, Text: text}))
	}
}

func (cl *chatClient) isWelcomed() bool {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	return cl.welcomed
}

// pending returns the messages not acknowledged yet.
func (cl *chatClient) pending() int {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	return len(cl.unacked)
}

// missing returns how many of the messages in sent (the last number of
// each client) cl has not received, and how many it received more than
// once (beyond the first).
func (cl *chatClient) missing(sent map[string]uint64) (lost, dups int) {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	for name, n := range sent {
		for seq := uint64(1); seq <= n; seq++ {
			switch k := cl.got[msgKey{name, seq}]; {
			case k == 0:
				lost++
			case k > 1:
				dups += k - 1
			}
		}
	}
	return lost, dups
}
