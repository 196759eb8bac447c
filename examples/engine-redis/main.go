// Engine-redis is a small Redis-compatible server on package engine. It
// speaks RESP2 and answers PING, ECHO, SET, GET, DEL and QUIT, and just
// enough of COMMAND and CONFIG for redis-cli and redis-benchmark; keys
// live in memory, in a map split into shards with a lock each, as the
// engine's loops serve clients at the same time. Pipelined commands are
// answered with one write per batch. Try it with
//
//	go run ./examples/engine-redis -addr 127.0.0.1:6380
//	redis-cli -p 6380 set a 1
//	redis-benchmark -p 6380 -t ping,set,get -P 32 -q
//
// scripts/redis-bench.sh compares it with redis-server.
package main

import (
	"context"
	"errors"
	"flag"
	"log"
	"net"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/galeio/gale/engine"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:6380", "address to listen on")
	loops := flag.Int("loops", 0, "event loops (0: GOMAXPROCS)")
	reusePort := flag.Bool("reuseport", false, "one listening socket per loop (SO_REUSEPORT)")
	flag.Parse()

	e, a, err := serve(*addr, engine.Options{Loops: *loops, ReusePort: *reusePort})
	if err != nil {
		log.Fatal(err)
	}
	log.Println("redis server listening on", a)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	select {
	case <-ctx.Done():
	case <-e.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	e.Shutdown(sctx)
}

// serve starts an engine serving Redis clients on addr (TCP) and returns
// it with the address it listens on. The caller stops it with Shutdown or
// Stop. The engine's cap on unconsumed input is set above the server's
// own (maxRequest), which answers with a protocol error first: the
// engine's is a backstop, which OnLimit reports to the client.
func serve(addr string, opts engine.Options) (*engine.Engine, net.Addr, error) {
	if opts.MaxInputBuffer == 0 {
		opts.MaxInputBuffer = maxRequest + maxInline
	}
	e, err := engine.New(newServer(), opts)
	if err != nil {
		return nil, nil, err
	}
	a, err := e.Listen("tcp", addr)
	if err == nil {
		err = e.Start()
	}
	if err != nil {
		e.Stop()
		return nil, nil, err
	}
	return e, a, nil
}

// flushSize is the size of replies at which exec pauses so that they are
// written before it runs more commands.
const flushSize = 64 << 10

// server is the engine's handler. Its callbacks run on every loop at
// once; the store has its own locks, and each OnData call borrows its
// scratch space from a pool.
type server struct {
	engine.BaseHandler
	db       *store
	sessions sync.Pool // of *session
}

// session is the scratch space of one OnData call: the arguments of the
// command being run and the replies not yet written. Borrowing it from a
// pool rather than keeping one per connection lets an idle connection
// hold no buffer.
type session struct {
	args [][]byte
	out  []byte
}

func newServer() *server {
	s := &server{db: newStore()}
	s.sessions.New = func() any { return &session{out: make([]byte, 0, 4<<10)} }
	return s
}

// OnData runs every whole command received and writes their replies; an
// unfinished command stays in the Inbound, which presents it again with
// the rest of its bytes. The arguments are slices of the Inbound's bytes,
// so a command is run without copying it.
func (srv *server) OnData(c *engine.Conn, in *engine.Inbound) engine.Action {
	s := srv.sessions.Get().(*session)
	defer srv.release(s)
	for {
		n, more, quit := srv.exec(in.Bytes(), s)
		in.Discard(n)
		if len(s.out) > 0 {
			_, err := c.Write(s.out) // copies what the socket does not take
			s.out = s.out[:0]
			if err != nil {
				return engine.Close
			}
		}
		if quit {
			return engine.Close
		}
		if !more {
			return engine.None
		}
	}
}

// OnLimit tells the client why the engine is closing its connection (it
// left more than MaxInputBuffer bytes unfinished), as Redis words its
// protocol errors.
func (srv *server) OnLimit(c *engine.Conn, err error) {
	c.Write(appendError(nil, protocolError("too big request").Error()))
}

// OnClose logs the connections a limit closed: a client cut off for
// sending too much, or idling past a timeout, is worth a line.
func (srv *server) OnClose(c *engine.Conn, err error) {
	switch {
	case errors.Is(err, engine.ErrInputBufferFull), errors.Is(err, engine.ErrWriteBufferFull), errors.Is(err, engine.ErrIdleTimeout):
		log.Printf("redis: closed %v: %v", c.RemoteAddr(), err)
	}
}

// release returns s to the pool, without references into the connection's
// input and without a buffer grown for an exceptional batch of replies.
func (srv *server) release(s *session) {
	clear(s.args[:cap(s.args)])
	s.args = s.args[:0]
	if cap(s.out) > 4*flushSize {
		s.out = make([]byte, 0, 4<<10)
	}
	s.out = s.out[:0]
	srv.sessions.Put(s)
}

// exec runs the whole commands at the start of b and appends their
// replies to s.out. It returns the bytes the commands took. It stops
// before a command, reporting more, once s.out holds flushSize bytes, so
// that the caller can write them before calling again. quit means the
// connection must close after the replies: the client sent QUIT or broke
// the protocol (the reply then says how), maybe by leaving an unfinished
// command of more than maxRequest bytes.
func (srv *server) exec(b []byte, s *session) (n int, more, quit bool) {
	for n < len(b) {
		if len(s.out) >= flushSize {
			return n, true, false
		}
		args, k, err := parseCommand(b[n:], s.args)
		s.args = args
		if err != nil {
			s.out = appendError(s.out, err.Error())
			return n, false, true
		}
		if k == 0 {
			if len(b)-n > maxRequest {
				s.out = appendError(s.out, protocolError("too big request").Error())
				return n, false, true
			}
			break // the rest of the command is still to come
		}
		n += k
		if len(args) > 0 {
			if s.out, quit = srv.run(args, s.out); quit {
				return n, false, true
			}
		}
	}
	return n, false, false
}

// run runs one command and appends its reply to out. quit reports QUIT.
func (srv *server) run(args [][]byte, out []byte) (_ []byte, quit bool) {
	name, args := args[0], args[1:]
	switch {
	case is(name, "GET"):
		if len(args) != 1 {
			return appendWrongArgs(out, "get"), false
		}
		return srv.db.appendGet(out, args[0]), false
	case is(name, "SET"):
		switch {
		case len(args) < 2:
			return appendWrongArgs(out, "set"), false
		case len(args) > 2:
			return appendError(out, "syntax error"), false // options such as EX are not supported
		}
		srv.db.set(args[0], args[1])
		return append(out, "+OK\r\n"...), false
	case is(name, "PING"):
		switch len(args) {
		case 0:
			return append(out, "+PONG\r\n"...), false
		case 1:
			return appendBulk(out, args[0]), false
		}
		return appendWrongArgs(out, "ping"), false
	case is(name, "ECHO"):
		if len(args) != 1 {
			return appendWrongArgs(out, "echo"), false
		}
		return appendBulk(out, args[0]), false
	case is(name, "DEL"):
		if len(args) == 0 {
			return appendWrongArgs(out, "del"), false
		}
		deleted := 0
		for _, k := range args {
			if srv.db.del(k) {
				deleted++
			}
		}
		return appendInt(out, deleted), false
	case is(name, "QUIT"):
		return append(out, "+OK\r\n"...), true
	case is(name, "COMMAND"):
		// redis-cli asks for command documentation; there is none.
		return append(out, "*0\r\n"...), false
	case is(name, "CONFIG"):
		return runConfig(args, out), false
	}
	return appendUnknown(out, name, args), false
}

// runConfig answers CONFIG. redis-benchmark reads "save" and
// "appendonly" with CONFIG GET to print them; this server keeps nothing
// on disk. CONFIG SET and the other subcommands succeed and do nothing.
func runConfig(args [][]byte, out []byte) []byte {
	if len(args) == 0 {
		return appendWrongArgs(out, "config")
	}
	if !is(args[0], "GET") {
		return append(out, "+OK\r\n"...)
	}
	if len(args) < 2 {
		return appendWrongArgs(out, "config|get")
	}
	var pairs [2][2]string
	n := 0
	for _, p := range args[1:] {
		switch {
		case is(p, "SAVE") && n < 2:
			pairs[n] = [2]string{"save", ""}
			n++
		case is(p, "APPENDONLY") && n < 2:
			pairs[n] = [2]string{"appendonly", "no"}
			n++
		}
	}
	out = append(out, '*')
	out = strconv.AppendInt(out, int64(2*n), 10)
	out = append(out, "\r\n"...)
	for _, kv := range pairs[:n] {
		out = appendBulk(out, []byte(kv[0]))
		out = appendBulk(out, []byte(kv[1]))
	}
	return out
}

// is reports whether name equals upper, ignoring the case of ASCII
// letters. upper is in capitals.
func is(name []byte, upper string) bool {
	if len(name) != len(upper) {
		return false
	}
	for i, c := range name {
		if 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		if c != upper[i] {
			return false
		}
	}
	return true
}

func appendInt(out []byte, v int) []byte {
	out = append(out, ':')
	out = strconv.AppendInt(out, int64(v), 10)
	return append(out, "\r\n"...)
}

// appendError appends "-ERR msg\r\n". Line breaks in msg become spaces,
// as msg may quote the client's bytes.
func appendError(out []byte, msg string) []byte {
	out = append(out, "-ERR "...)
	out = appendClean(out, []byte(msg))
	return append(out, "\r\n"...)
}

func appendWrongArgs(out []byte, cmd string) []byte {
	return appendError(out, "wrong number of arguments for '"+cmd+"' command")
}

// appendUnknown appends Redis's reply to an unknown command, which quotes
// the name and the first arguments, up to 128 bytes each.
func appendUnknown(out, name []byte, args [][]byte) []byte {
	const quoted = 128
	out = append(out, "-ERR unknown command '"...)
	out = appendClean(out, name[:min(len(name), quoted)])
	out = append(out, "', with args beginning with: "...)
	room := quoted
	for _, a := range args {
		if room <= 0 {
			break
		}
		a = a[:min(len(a), room)]
		room -= len(a)
		out = append(out, '\'')
		out = appendClean(out, a)
		out = append(out, "' "...)
	}
	return append(out, "\r\n"...)
}

// appendClean appends b with '\r' and '\n' replaced by spaces, so that it
// cannot end a simple string or error reply early.
func appendClean(out, b []byte) []byte {
	for _, c := range b {
		if c == '\r' || c == '\n' {
			c = ' '
		}
		out = append(out, c)
	}
	return out
}
