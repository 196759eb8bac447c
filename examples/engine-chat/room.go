package main

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/galeio/gale/engine"
)

// room is the set of clients who chose a nickname. Callbacks of every
// loop join, leave and broadcast at the same time, so it is guarded by a
// mutex, held only to change the set or to take a copy of it: writes to
// the clients happen after, so that a loop does not wait while another
// writes to a thousand sockets.
type room struct {
	mu     sync.Mutex
	byNick map[string]*session // by lower-case nickname: "Bob" takes "bob"
	// members are the sessions of byNick. The slice is replaced on every
	// join and leave, never changed in place, so a broadcast walks the one
	// it took under mu without holding it and without copying it.
	members []*session
}

func newRoom() *room { return &room{byNick: make(map[string]*session)} }

// join gives s the nickname nick and adds it to the room, unless another
// client has that nickname. It returns the members who were there before
// s, taken in the same hold of mu: they, and only they, are told that s
// joined. (Taking them later would tell a client who joined in between,
// and who was already told who was there by /who or its own arrival.)
func (r *room) join(s *session, nick string) (before []*session, ok bool) {
	key := strings.ToLower(nick)
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, taken := r.byNick[key]; taken {
		return nil, false
	}
	s.nick = nick // before it is shared: immutable from now on
	r.byNick[key] = s
	before = r.members
	r.members = append(slices.Clip(r.members), s) // a new array: see members
	return before, true
}

// leave takes s out of the room.
func (r *room) leave(s *session) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.byNick, strings.ToLower(s.nick))
	if i := slices.Index(r.members, s); i >= 0 {
		r.members = slices.Delete(slices.Clone(r.members), i, i+1)
	}
}

// broadcast writes msg to everyone in the room but from (nil: everyone).
// The same bytes go to every client: Conn.Write writes what the socket
// takes at once and copies the rest, so msg is free when it returns.
func (r *room) broadcast(from *session, msg []byte) {
	r.mu.Lock()
	members := r.members
	r.mu.Unlock()
	sendAll(members, from, msg)
}

// sendAll writes msg to each of members but from, as broadcast does.
func sendAll(members []*session, from *session, msg []byte) {
	for _, s := range members {
		if s != from {
			s.send(msg)
		}
	}
}

// appendWho appends the line that answers /who: the nicknames, sorted.
func (r *room) appendWho(dst []byte) []byte {
	r.mu.Lock()
	nicks := make([]string, len(r.members))
	for i, s := range r.members {
		nicks[i] = s.nick
	}
	r.mu.Unlock()
	slices.Sort(nicks)
	dst = append(dst, "* here: "...)
	for i, n := range nicks {
		if i > 0 {
			dst = append(dst, ", "...)
		}
		dst = append(dst, n...)
	}
	return append(dst, '\n')
}

// session is a client's state, kept in its Conn's context.
type session struct {
	c *engine.Conn

	// nick is "" until the client joins; it is set once, by room.join.
	// The fields below it belong to the connection's callbacks, which
	// run on its loop one at a time.
	nick   string
	nickBy time.Time // when the nickname is due (-nick-timeout)
	out    []byte    // scratch for the lines this client sends

	writeTimeout time.Duration
	// wmu orders the writes to the client, which come from every loop
	// (any client's line is broadcast from that client's loop), with the
	// write deadline's bookkeeping, which must see them one at a time.
	wmu sync.Mutex
	// writeBy is the write deadline set on c, zero when none is. It is
	// set when a write leaves output queued (a backlog starts) and
	// cleared by the first write that finds the backlog gone.
	writeBy time.Time
}

// send writes msg to the client, which must take it (and whatever it is
// behind) within writeTimeout.
//
// A client that reads keeps up: its writes go straight to the socket and
// nothing is queued. When output is queued, the client fell behind, and
// the write deadline is set: if any of it is still queued when the
// deadline passes, the engine calls OnDeadline with ErrWriteDeadline and,
// with Options.CloseOnDeadline, cuts the connection. The deadline is set
// once per backlog, not moved on every write: moved, a client that never
// reads would never reach it while the room is busy. Once the backlog is
// gone it must be cleared, as a net.Conn's would: after the deadline, the
// engine fails every Write with ErrWriteDeadline, backlog or not.
//
// The deadline is set and cleared only when a backlog starts and ends: a
// client that keeps up costs no timer.
func (s *session) send(msg []byte) {
	c := s.c
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if !s.writeBy.IsZero() && c.OutboundBuffered() == 0 {
		s.clearWriteDeadline() // caught up
	}
	_, err := c.Write(msg)
	if errors.Is(err, engine.ErrWriteDeadline) {
		if c.OutboundBuffered() > 0 {
			// Output queued since before the deadline (only send adds
			// to it, under wmu): too slow. The deadline's timer cuts it,
			// unless the backlog gets out before that timer runs; then
			// this line was lost, so close the connection after it.
			c.Close()
			return
		}
		// The backlog got out between the check and the Write, as the
		// deadline passed.
		s.clearWriteDeadline()
		_, err = c.Write(msg)
	}
	if err == nil && s.writeBy.IsZero() && c.OutboundBuffered() > 0 {
		s.writeBy = time.Now().Add(s.writeTimeout)
		c.SetWriteDeadline(s.writeBy)
	}
	// Any other error closed c (ErrWriteBufferFull: it fell more than
	// Options.MaxWriteBuffer behind) or found it closed; OnClose follows
	// or ran.
}

// clearWriteDeadline clears c's write deadline. s.wmu is held.
func (s *session) clearWriteDeadline() {
	s.writeBy = time.Time{}
	s.c.SetWriteDeadline(time.Time{})
}

// name returns the client's nickname, or its address before it has one.
func (s *session) name() string {
	if s.nick != "" {
		return s.nick
	}
	return s.c.RemoteAddr().String()
}
