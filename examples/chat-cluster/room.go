package main

import (
	"context"
	"encoding/json"
	"errors"
	"log"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/galeio/gale/websocket"
)

// The limits on what a client sends.
const (
	maxClient = 64  // bytes in a client's name
	maxText   = 500 // characters in a message
	readLimit = 4 << 10
	// pubQueue is the number of messages waiting for Redis, for all of an
	// instance's connections; a message that finds it full closes its
	// connection with 1013 (try again later): the client resends it
	// through another connection, perhaps to another instance.
	pubQueue   = 1024
	pubWorkers = 4
)

// event is a message of the chat protocol, a JSON object, both ways.
//
// A client sends {"type":"hello","id":...} first: id is the last stream
// ID it received, or "" on its first connection. The server answers
// {"type":"welcome","id":...}: the ID it sends messages after. For an
// id the client gave, that is the same; the messages of the stream that
// follow it come first (a replay), then the new ones as they come. Then
// the client sends {"type":"msg","client":...,"seq":...,"text":...} for
// each message; the server answers {"type":"ack","seq":...} once Redis
// has it, and every client, its sender included, receives it as
// {"type":"msg","id":...,"client":...,"seq":...,"text":...}. A client
// resends the messages not acknowledged when it reconnects: a message
// can then arrive twice (under two IDs), and clients drop the second by
// its (client, seq).
type event struct {
	Type   string `json:"type"`
	ID     string `json:"id,omitempty"`
	Client string `json:"client,omitempty"`
	Seq    uint64 `json:"seq,omitempty"`
	Text   string `json:"text,omitempty"`
}

// A member is a connection of the room.
type member struct {
	hello  bool     // its hello came
	live   bool     // it receives new entries from the reader
	closed bool     // it has closed
	cursor streamID // the last entry it was sent
}

// pubReq is a message waiting for Redis.
type pubReq struct {
	c  *websocket.Conn
	ev event
}

// counters are the room's, for /metrics.
type counters struct {
	published atomic.Uint64 // messages added to the stream
	failed    atomic.Uint64 // messages Redis refused (the client resends)
	rejected  atomic.Uint64 // messages that found the queue full
	delivered atomic.Uint64 // messages sent to clients, one per client
	replayed  atomic.Uint64 // of those, sent on catch-up
	hellos    atomic.Uint64 // hellos, the reconnections' included
	resumes   atomic.Uint64 // hellos that named an ID: reconnections
}

// room is the chat room: the websocket.Handler of every connection, and
// the fan-out of the stream to this instance's members. Callbacks run on
// every loop at once, so a mutex guards it. The reader delivers entries
// with it held, so that a member going live (catchUp) sees a consistent
// last; Broadcast encodes once and its writes never wait for a peer.
type room struct {
	websocket.BaseHandler
	log  *log.Logger
	hist history
	pub  chan pubReq
	ctx  context.Context // ends when the room stops
	stat counters

	mu      sync.Mutex
	members map[*websocket.Conn]*member
	last    streamID // the last entry the reader delivered
	targets []*websocket.Conn
}

func newRoom(ctx context.Context, l *log.Logger, h history) *room {
	return &room{log: l, hist: h, ctx: ctx, pub: make(chan pubReq, pubQueue), members: make(map[*websocket.Conn]*member)}
}

// The reasons a connection is closed for, sent in its close frame.
var (
	errNotJSON = errors.New("not a JSON message")
	errType    = errors.New("unknown message type")
	errHello   = errors.New("hello first, and once")
	errMsg     = errors.New("a message has a client (1 to 64 bytes), a seq and 1 to 500 characters")
)

// reasonRestart is the reason of the close frames that a shutdown sends
// with StatusServiceRestart (1012): the client reconnects at once.
const reasonRestart = "service restart"

// OnOpen takes c in.
func (r *room) OnOpen(c *websocket.Conn) {
	r.mu.Lock()
	r.members[c] = &member{}
	r.mu.Unlock()
}

// OnMessage handles a hello or a message.
func (r *room) OnMessage(c *websocket.Conn, typ websocket.MessageType, data []byte) {
	var in event
	if typ != websocket.TextMessage || json.Unmarshal(data, &in) != nil {
		r.refuse(c, errNotJSON)
		return
	}
	var err error
	switch in.Type {
	case "hello":
		err = r.hello(c, in.ID)
	case "msg":
		err = r.say(c, in)
	default:
		err = errType
	}
	if err != nil {
		r.refuse(c, err)
	}
}

func (r *room) refuse(c *websocket.Conn, err error) {
	r.log.Printf("%s: closing: %v", c.RemoteAddr(), err)
	c.Close(websocket.StatusPolicyViolation, err.Error())
}

// hello starts c's delivery: at once from the reader's last entry for a
// new client, after a catch-up from since for a returning one.
func (r *room) hello(c *websocket.Conn, since string) error {
	r.stat.hellos.Add(1)
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.members[c]
	if m.hello {
		return errHello
	}
	m.hello = true
	if since == "" {
		m.cursor, m.live = r.last, true
		c.WriteMessage(websocket.TextMessage, encode(event{Type: "welcome", ID: r.last.String()}))
		return nil
	}
	r.stat.resumes.Add(1)
	m.cursor = parseID(since)
	c.WriteMessage(websocket.TextMessage, encode(event{Type: "welcome", ID: m.cursor.String()}))
	go r.catchUp(c, m)
	return nil
}

// catchUp sends c the entries after its cursor, from Redis, until it has
// all those the reader has delivered; then the reader takes over. The
// check is made with the lock held, which the reader holds to deliver,
// so no entry falls between the two.
func (r *room) catchUp(c *websocket.Conn, m *member) {
	for {
		r.mu.Lock()
		cursor, done := m.cursor, m.closed
		if !done && !cursor.less(r.last) {
			m.live = true
			done = true
		}
		r.mu.Unlock()
		if done {
			return
		}
		es, err := r.hist.after(r.ctx, cursor)
		if err != nil {
			r.log.Printf("%s: replay: %v", c.RemoteAddr(), err)
			c.Close(websocket.StatusTryAgainLater, "history unavailable")
			return
		}
		for _, e := range es {
			c.WriteMessage(websocket.TextMessage, e.wire)
		}
		r.stat.replayed.Add(uint64(len(es)))
		r.stat.delivered.Add(uint64(len(es)))
		if len(es) > 0 {
			r.mu.Lock()
			m.cursor = es[len(es)-1].id
			r.mu.Unlock()
		}
	}
}

// say queues c's message for Redis.
func (r *room) say(c *websocket.Conn, ev event) error {
	n := utf8.RuneCountInString(ev.Text)
	if ev.Client == "" || len(ev.Client) > maxClient || ev.Seq == 0 || n < 1 || n > maxText {
		return errMsg
	}
	select {
	case r.pub <- pubReq{c, event{Type: "msg", Client: ev.Client, Seq: ev.Seq, Text: ev.Text}}:
	default:
		r.stat.rejected.Add(1)
		c.Close(websocket.StatusTryAgainLater, "too busy")
	}
	return nil
}

// publish adds the queued messages to the stream and acknowledges them,
// until stop is closed; then it publishes what is left in the queue and
// returns. A message Redis refuses is not acknowledged: its connection is
// closed, and the client resends it once reconnected.
func (r *room) publish(stop <-chan struct{}) {
	for {
		select {
		case p := <-r.pub:
			r.add(p)
		case <-stop:
			for {
				select {
				case p := <-r.pub:
					r.add(p)
				default:
					return
				}
			}
		}
	}
}

func (r *room) add(p pubReq) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	_, err := r.hist.add(ctx, p.ev)
	cancel()
	if err != nil {
		r.stat.failed.Add(1)
		r.log.Printf("%s: XADD: %v", p.c.RemoteAddr(), err)
		p.c.Close(websocket.StatusTryAgainLater, "history unavailable")
		return
	}
	r.stat.published.Add(1)
	p.c.WriteMessage(websocket.TextMessage, encode(event{Type: "ack", Seq: p.ev.Seq}))
}

// read delivers the stream's new entries to the live members until ctx
// ends. It starts after the newest entry at the time start was called.
func (r *room) read(ctx context.Context) {
	for ctx.Err() == nil {
		es, err := r.hist.wait(ctx, r.last) // r.last is written only here
		if err != nil {
			if ctx.Err() == nil {
				r.log.Printf("XREAD: %v", err)
				time.Sleep(200 * time.Millisecond)
			}
			continue
		}
		r.deliver(es)
	}
}

// deliver sends each entry to the live members that lack it.
func (r *room) deliver(es []entry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range es {
		r.targets = r.targets[:0]
		for c, m := range r.members {
			if m.live && m.cursor.less(e.id) {
				r.targets = append(r.targets, c)
				m.cursor = e.id
			}
		}
		websocket.Broadcast(r.targets, websocket.TextMessage, e.wire)
		r.stat.delivered.Add(uint64(len(r.targets)))
		r.last = e.id
	}
	clear(r.targets)
}

// OnClose takes c out.
func (r *room) OnClose(c *websocket.Conn, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if m := r.members[c]; m != nil {
		m.closed = true
		delete(r.members, c)
	}
}

// size returns the number of members.
func (r *room) size() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.members)
}
