package httpd

import (
	"bufio"
	"bytes"
	"io"
	"log"
	"net"
	"net/http"
	"runtime"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/netconn"
)

// hijack moves the connection off its loop (see response.Hijack). A
// task on the loop first stops the loop from consuming anything more
// and takes the body's unread bytes (handOff); the detach, posted after
// it, then hands over what the loop holds unconsumed and the socket.
// Every byte the client sent after the head comes out of the returned
// connection, in order.
func (w *response) hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, ex := w.c, w.ex
	c.quit.Store(true)
	w.hijacked = true
	if err := c.ec.Execute(func(*engine.Conn) { ex.hijackBuf = c.handOff(ex) }); err != nil {
		w.hijacked = false
		return nil, nil, err
	}
	nc, err := netconn.FromEngine(c.ec)
	if err != nil {
		w.hijacked = false
		return nil, nil, err
	}
	// FromEngine's hand-over ran on the loop after handOff: its result
	// is visible here.
	c.s.setState(c, http.StateHijacked)
	// The handler goes on as the connection's reader or writer, for as
	// long as the connection lasts: it no longer counts against
	// MaxHandlers, as net/http counts nothing against a hijacked one.
	w.detached = true
	c.s.pool.release()
	var r io.Reader = nc
	if len(ex.hijackBuf) > 0 {
		r = io.MultiReader(bytes.NewReader(ex.hijackBuf), nc)
		ex.hijackBuf = nil // the reader's now
	}
	return nc, bufio.NewReadWriter(bufio.NewReader(r), bufio.NewWriter(nc)), nil
}

// handOff stops the loop's work on the connection for a hijack: from now
// on OnData consumes nothing, so that what arrives before the detach is
// handed over with the socket. It returns the body bytes the loop took
// and the handler did not read (re-framed if chunked: see resume), which
// come first on the hijacked connection. It runs on the loop.
func (c *conn) handOff(ex *exchange) []byte {
	c.handing = true
	rest := ex.body.handOff()
	if ex.chunked {
		rest = ex.dec.resume(rest)
	}
	if c.cur == ex {
		c.cur = nil
		ex.release() // the loop's reference: the body is no longer fed
	}
	return rest
}

func stack() []byte {
	const size = 64 << 10
	buf := make([]byte, size)
	return buf[:runtime.Stack(buf, false)]
}

func stdLogf(format string, args ...any) { log.Printf(format, args...) }
