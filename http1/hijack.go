package http1

import (
	"bufio"
	"bytes"
	"io"
	"log"
	"net"
	"net/http"
	"runtime"

	"github.com/galeio/gale/netconn"
)

// hijack moves the connection off its loop (see response.Hijack).
func (w *response) hijack() (net.Conn, *bufio.ReadWriter, error) {
	c := w.c
	c.quit.Store(true)
	w.hijacked = true
	w.ex.body.abandonTo(&w.ex.hijackBuf)
	nc, err := netconn.FromEngine(c.ec)
	if err != nil {
		w.hijacked = false
		return nil, nil, err
	}
	c.s.setState(c, http.StateHijacked)
	// The handler goes on as the connection's reader or writer, for as
	// long as the connection lasts: it no longer counts against
	// MaxHandlers, as net/http counts nothing against a hijacked one.
	w.detached = true
	c.s.pool.release()
	var r io.Reader = nc
	if len(w.ex.hijackBuf) > 0 {
		r = io.MultiReader(bytes.NewReader(bytes.Clone(w.ex.hijackBuf)), nc)
	}
	return nc, bufio.NewReadWriter(bufio.NewReader(r), bufio.NewWriter(nc)), nil
}

func stack() []byte {
	const size = 64 << 10
	buf := make([]byte, size)
	return buf[:runtime.Stack(buf, false)]
}

func stdLogf(format string, args ...any) { log.Printf(format, args...) }
