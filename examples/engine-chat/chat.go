package main

import (
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/galeio/gale/engine"
)

// Lines the server sends. Its own lines start with "* ", which no chat
// line can: those start with a nickname, which has no space, and ": ".
const (
	msgWelcome  = "* welcome; your nickname?\n"
	msgBadNick  = "* a nickname is 1 to 32 printable characters, without spaces or colons, not starting with /; another?\n"
	msgHelp     = "; /who lists who is here, /quit leaves\n"
	msgUnknown  = "* unknown command; /who lists who is here, /quit leaves\n"
	msgBye      = "* bye\n"
	msgIdle     = "* idle for too long, bye\n"
	msgShutdown = "* server shutting down\n"
)

// maxKeptOut is the largest scratch buffer a session keeps between lines.
const maxKeptOut = 1 << 10

// server is the engine's handler: the chat room and its rules.
//
// Its callbacks run on every loop at once. The room has its own lock;
// each client's session is used by the callbacks of its connection, which
// run one at a time on its loop, and by the writes of others, which its
// send method orders.
type server struct {
	engine.BaseHandler
	cfg  config
	room *room
	// draining is set when a graceful Shutdown begins (the first
	// OnDrain): everyone is leaving, so leaves are not announced.
	draining atomic.Bool

	msgTooLong, msgNoNick []byte
}

func newServer(cfg config) *server {
	return &server{
		cfg:        cfg,
		room:       newRoom(),
		msgTooLong: fmt.Appendf(nil, "* line too long (over %d bytes), bye\n", cfg.maxLine),
		msgNoNick:  fmt.Appendf(nil, "* no nickname after %v, bye\n", cfg.nickTimeout),
	}
}

// OnOpen greets a client and gives it -nick-timeout to choose a
// nickname (see OnData and OnDeadline).
func (srv *server) OnOpen(c *engine.Conn) ([]byte, engine.Action) {
	s := &session{c: c, writeTimeout: srv.cfg.writeTimeout, nickBy: time.Now().Add(srv.cfg.nickTimeout)}
	c.SetContext(s)
	c.SetReadDeadline(s.nickBy)
	return []byte(msgWelcome), engine.None
}

// OnData handles every whole line received. An unfinished line stays in
// the Inbound, which presents it again with the bytes that follow, up to
// -max-line bytes: a longer one gets an error and the connection closes.
func (srv *server) OnData(c *engine.Conn, in *engine.Inbound) engine.Action {
	s := c.Context().(*session)
	for {
		line, n, tooLong := nextLine(in.Bytes(), srv.cfg.maxLine)
		if tooLong {
			srv.cfg.log.Printf("%s cut: line over %d bytes (-max-line)", s.name(), srv.cfg.maxLine)
			s.send(srv.msgTooLong)
			in.Discard(in.Len()) // left there, it could pass MaxInputBuffer and end c before the error goes out
			return engine.Close
		}
		if n == 0 {
			break
		}
		act := srv.handle(s, line) // line lives in in: use it before Discard
		in.Discard(n)
		if act != engine.None {
			in.Discard(in.Len())
			return act
		}
	}
	if s.nick == "" {
		// A read deadline passes only if no byte at all arrived since it
		// was set: any byte meets it, even the start of a nickname that
		// never ends. Set it again, at the same time, so that what is due
		// by then is the whole nickname.
		c.SetReadDeadline(s.nickBy)
	}
	return engine.None
}

// handle handles one line from s, without its line end.
func (srv *server) handle(s *session, line []byte) engine.Action {
	switch {
	case string(line) == "/quit":
		s.send([]byte(msgBye))
		return engine.Close
	case s.nick == "":
		srv.choose(s, line)
	case len(line) == 0:
	case string(line) == "/who":
		s.send(srv.room.appendWho(s.out[:0]))
	case line[0] == '/':
		s.send([]byte(msgUnknown))
	default:
		s.out = append(s.out[:0], s.nick...)
		s.out = append(s.out, ": "...)
		s.out = appendClean(s.out, line)
		s.out = append(s.out, '\n')
		srv.room.broadcast(s, s.out)
	}
	if cap(s.out) > maxKeptOut {
		s.out = nil // grown by a long line or /who: a quiet client keeps no big buffer
	}
	return engine.None
}

// choose makes nick s's nickname if it is valid and free, and tells s
// otherwise.
func (srv *server) choose(s *session, nick []byte) {
	if !validNick(nick) {
		s.send([]byte(msgBadNick))
		return
	}
	before, ok := srv.room.join(s, string(nick))
	if !ok {
		s.send(fmt.Appendf(s.out[:0], "* %s is taken; another?\n", nick))
		return
	}
	s.c.SetReadDeadline(time.Time{}) // (any set by an earlier OnData comes first)
	s.send(fmt.Appendf(s.out[:0], "* hello %s%s", s.nick, msgHelp))
	sendAll(before, s, fmt.Appendf(s.out[:0], "* %s joined\n", s.nick))
	srv.cfg.log.Printf("%s joined from %v", s.nick, s.c.RemoteAddr())
}

// OnDeadline says why the connection ends. Options.CloseOnDeadline is
// set (see options), so after a read or write deadline the engine closes
// it at once, dropping what is queued; after an idle timeout it closes it
// once the goodbye is written (or at once if the client stopped reading
// for as long). The action returned has no say in either.
func (srv *server) OnDeadline(c *engine.Conn, err error) engine.Action {
	s := c.Context().(*session)
	switch {
	case errors.Is(err, engine.ErrIdleTimeout):
		s.send([]byte(msgIdle))
	case errors.Is(err, engine.ErrReadDeadline):
		// Only set until the nickname came. Written at once: nothing is
		// queued for a client that has been sent one line or two.
		s.send(srv.msgNoNick)
	case errors.Is(err, engine.ErrWriteDeadline):
		// It is not reading: a word would be queued, then dropped.
	}
	return engine.Close
}

// OnDrain says goodbye to every client when a graceful Shutdown begins;
// the engine closes the connection once that is written.
func (srv *server) OnDrain(c *engine.Conn) {
	srv.draining.Store(true)
	c.Context().(*session).send([]byte(msgShutdown))
}

// OnClose takes the client out of the room, tells the others, and logs
// why it left.
func (srv *server) OnClose(c *engine.Conn, err error) {
	s, ok := c.Context().(*session)
	if !ok {
		return // OnOpen never ran: the engine stopped first
	}
	srv.logClose(s, err)
	if s.nick == "" {
		return
	}
	srv.room.leave(s)
	if !srv.draining.Load() {
		srv.room.broadcast(nil, fmt.Appendf(nil, "* %s left\n", s.nick))
	}
}

// logClose logs why s's connection ended: the server cut it, or it left,
// or it was lost (a reset, say).
func (srv *server) logClose(s *session, err error) {
	cfg := &srv.cfg
	switch {
	case errors.Is(err, engine.ErrWriteBufferFull):
		cfg.log.Printf("%s cut: more than %d bytes behind (-backlog)", s.name(), cfg.backlog)
	case errors.Is(err, engine.ErrWriteDeadline):
		cfg.log.Printf("%s cut: output stalled for %v (-write-timeout)", s.name(), cfg.writeTimeout)
	case errors.Is(err, engine.ErrIdleTimeout):
		cfg.log.Printf("%s cut: silent for %v (-idle)", s.name(), cfg.idleTimeout)
	case errors.Is(err, engine.ErrReadDeadline):
		cfg.log.Printf("%s cut: no nickname within %v (-nick-timeout)", s.name(), cfg.nickTimeout)
	case err == nil, err == io.EOF, errors.Is(err, engine.ErrEngineStopped):
		if s.nick != "" {
			cfg.log.Printf("%s left", s.nick)
		}
	default:
		cfg.log.Printf("%s lost: %v", s.name(), err) // a reset, say
	}
}
