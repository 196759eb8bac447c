package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/galeio/gale/websocket"
)

// The limits on what a client sends. The page holds its inputs to them;
// the server checks them for any other client.
const (
	maxNick = 24  // characters in a nickname
	maxText = 500 // characters in a message
	// readLimit caps a message's size (after decompression): a join or a
	// message at its limits, in JSON, with room for escapes. Anything
	// longer is not from the page: the connection is closed with 1009.
	readLimit = 8 << 10
	// joinTimeout is how long a connection may stay without joining.
	joinTimeout = 10 * time.Second
)

// event is a message of the chat protocol, a JSON object, both ways.
//
// A client sends {"type":"join","nick":...} first, then {"type":"msg",
// "text":...} for each thing it says. The server answers the join with
// {"type":"welcome","nick":...,"text":...} (the nickname as kept, and who
// else is here, separated by ", "), tells the others {"type":"join",
// "nick":...}, sends every message to everyone, its sender included, as
// {"type":"msg","nick":...,"text":...}, and {"type":"leave","nick":...}
// when a member goes. Anything else closes the connection with
// StatusPolicyViolation and the reason.
type event struct {
	Type string `json:"type"`
	Nick string `json:"nick,omitempty"`
	Text string `json:"text,omitempty"`
}

// A member is a connection of the room; nick is "" until it joins.
type member struct {
	nick  string
	timer *time.Timer // closes a connection that does not join in time
}

// room is the chat room: it is the websocket.Handler of every
// connection. Callbacks run on every loop at once, so a mutex guards it.
// Messages are broadcast while it is held, so that every member sees them
// in the same order; that costs little, as Broadcast encodes and
// compresses a message once and its writes never wait for a peer.
type room struct {
	log         *log.Logger
	joinTimeout time.Duration

	mu      sync.Mutex
	conns   map[*websocket.Conn]*member // every open connection
	joined  []*websocket.Conn           // those that joined, by arrival: Broadcast's list
	closing bool                        // shutting down: every connection is sent away
}

func newRoom(l *log.Logger) *room {
	return &room{log: l, joinTimeout: joinTimeout, conns: make(map[*websocket.Conn]*member)}
}

// The reasons a connection is closed for, sent in its close frame.
var (
	errNotText = errors.New("text messages only")
	errNotJSON = errors.New("not a JSON message")
	errType    = errors.New("unknown message type")
	errNick    = fmt.Errorf("a nickname has 1 to %d characters", maxNick)
	errText    = fmt.Errorf("a message has at most %d characters", maxText)
	errTwice   = errors.New("already joined")
	errNotIn   = errors.New("join first")
	errNoJoin  = errors.New("no join in time")
)

// reasonRestart is the reason of the close frames that a shutdown sends
// (with StatusGoingAway): the page reconnects on those.
const reasonRestart = "server restarting"

// statusWrong is the close code of a client that broke the protocol.
const statusWrong = websocket.StatusPolicyViolation

// OnOpen takes c in, unless the server is shutting down.
func (r *room) OnOpen(c *websocket.Conn) {
	r.mu.Lock()
	closing := r.closing
	if !closing {
		m := &member{}
		m.timer = time.AfterFunc(r.joinTimeout, func() { r.expire(c, m) })
		r.conns[c] = m
	}
	r.mu.Unlock()
	if closing {
		c.Close(websocket.StatusGoingAway, reasonRestart)
	}
}

// expire closes c if it has not joined.
func (r *room) expire(c *websocket.Conn, m *member) {
	r.mu.Lock()
	late := r.conns[c] == m && m.nick == ""
	r.mu.Unlock()
	if late {
		r.refuse(c, statusWrong, errNoJoin)
	}
}

// OnMessage handles a join or a message.
func (r *room) OnMessage(c *websocket.Conn, typ websocket.MessageType, data []byte) {
	if typ != websocket.TextMessage {
		r.refuse(c, websocket.StatusUnsupportedData, errNotText)
		return
	}
	var in event
	if err := json.Unmarshal(data, &in); err != nil {
		r.refuse(c, statusWrong, errNotJSON)
		return
	}
	var err error
	switch in.Type {
	case "join":
		err = r.join(c, in.Nick)
	case "msg":
		err = r.say(c, in.Text)
	default:
		err = errType
	}
	if err != nil {
		r.refuse(c, statusWrong, err)
	}
}

// refuse closes c for a client's mistake, with err as the reason.
func (r *room) refuse(c *websocket.Conn, code websocket.StatusCode, err error) {
	r.log.Printf("%s: closing: %v", c.RemoteAddr(), err)
	c.Close(code, err.Error())
}

// join makes c a member as nick: it welcomes c and tells the others.
func (r *room) join(c *websocket.Conn, nick string) error {
	nick, ok := clean(nick, maxNick)
	if !ok {
		return errNick
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.conns[c]
	switch {
	case m == nil: // sent away: shutting down
		return nil
	case m.nick != "":
		return errTwice
	}
	m.nick = nick
	m.timer.Stop()
	here := make([]string, len(r.joined))
	for i, o := range r.joined {
		here[i] = r.conns[o].nick
	}
	c.WriteMessage(websocket.TextMessage, encode(event{Type: "welcome", Nick: nick, Text: strings.Join(here, ", ")}))
	websocket.Broadcast(r.joined, websocket.TextMessage, encode(event{Type: "join", Nick: nick}))
	r.joined = append(r.joined, c)
	r.log.Printf("%s joined from %s", nick, c.RemoteAddr())
	return nil
}

// say sends c's text to every member. Empty text is ignored.
func (r *room) say(c *websocket.Conn, text string) error {
	text, ok := clean(text, maxText)
	if !ok {
		if text == "" {
			return nil
		}
		return errText
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.conns[c]
	switch {
	case m == nil:
		return nil
	case m.nick == "":
		return errNotIn
	}
	websocket.Broadcast(r.joined, websocket.TextMessage, encode(event{Type: "msg", Nick: m.nick, Text: text}))
	return nil
}

// OnClose takes c out, and tells the others if it had joined.
func (r *room) OnClose(c *websocket.Conn, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.conns[c]
	if m == nil {
		return
	}
	delete(r.conns, c)
	m.timer.Stop()
	if m.nick == "" {
		return
	}
	r.joined = slices.DeleteFunc(r.joined, func(o *websocket.Conn) bool { return o == c })
	r.log.Printf("%s left (%v)", m.nick, err)
	if !r.closing {
		websocket.Broadcast(r.joined, websocket.TextMessage, encode(event{Type: "leave", Nick: m.nick}))
	}
}

// closeAll starts the closing handshake of every connection, with code
// and reason, and sends away those that open from now on. The server's
// Shutdown calls it, and then waits for the connections to close.
func (r *room) closeAll(code websocket.StatusCode, reason string) {
	r.mu.Lock()
	r.closing = true
	conns := make([]*websocket.Conn, 0, len(r.conns))
	for c := range r.conns {
		conns = append(conns, c)
	}
	r.mu.Unlock()
	for _, c := range conns {
		c.Close(code, reason)
	}
}

// clean returns s without control characters (line breaks included)
// and surrounding space, and whether it has 1 to limit characters left.
func clean(s string, limit int) (string, bool) {
	s = strings.TrimSpace(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, s))
	n := utf8.RuneCountInString(s)
	return s, n >= 1 && n <= limit
}

// encode returns e in JSON.
func encode(e event) []byte {
	b, err := json.Marshal(e)
	if err != nil {
		panic(err) // strings only: cannot fail
	}
	return b
}
