//go:build unix

package restart_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"time"

	"github.com/galeio/gale/httpd"
	"github.com/galeio/gale/restart"
	"github.com/galeio/gale/websocket"
)

func init() { childModes["server"] = serverChild }

// echo sends every message back.
type echo struct{ websocket.BaseHandler }

func (echo) OnMessage(c *websocket.Conn, typ websocket.MessageType, data []byte) {
	c.WriteMessage(typ, data)
}

// serverChild is one generation of TestRestartUnderLoad's server: it
// takes the listener from the control socket at GALE_RESTART_CTL if
// GALE_RESTART_TAKE is set (else listens anew), serves HTTP and an echo
// WebSocket, offers the listener in turn, and once taken over (or once
// its stdin ends) stops accepting and drains. It reports on stdout:
// "serving <addr>", then "drained <duration> <Shutdown's error>".
func serverChild() int {
	ctl := os.Getenv("GALE_RESTART_CTL")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var tk *restart.Takeover
	var inherited map[string]net.Listener
	if os.Getenv("GALE_RESTART_TAKE") != "" {
		var err error
		if tk, err = restart.Take(ctx, ctl); err != nil {
			fmt.Println("take:", err)
			return 1
		}
		inherited = tk.Listeners
	}
	ln, err := restart.Listen(inherited, "tcp", "127.0.0.1:0", "http")
	if err != nil {
		fmt.Println("listen:", err)
		return 1
	}
	srv := newServer(os.Getpid())
	conns := os.Getenv("GALE_RESTART_CONNS") != "" // hand idle connections over too
	var offered atomic.Pointer[restart.Handover]
	var hc handCount
	if conns {
		srv.HandOff = func(nc net.Conn, input []byte) error {
			err := offered.Load().SendConn(nc, input)
			hc.count(&hc.handed, &hc.failed, err)
			return err
		}
	}
	go srv.Serve(ln)
	if tk != nil {
		var err error
		if conns {
			err = tk.ReadyWith(ctx, func(nc net.Conn, input []byte) {
				hc.count(&hc.taken, &hc.unserved, srv.ServeConn(nc, input))
			})
		} else {
			err = tk.Ready()
		}
		if err != nil {
			fmt.Println("ready:", err)
			return 1
		}
	}
	h, err := restart.Offer(ctl, map[string]net.Listener{"http": ln})
	if err != nil {
		fmt.Println("offer:", err)
		return 1
	}
	offered.Store(h)
	fmt.Println("serving", ln.Addr())
	stdin := make(chan struct{})
	go func() { io.Copy(io.Discard, os.Stdin); close(stdin) }()
	select {
	case <-h.Taken():
	case <-stdin:
	}
	if !conns {
		h.Close()
	}
	start := time.Now()
	err = srv.Shutdown(ctx) // closes ln: the new process's copy stays open
	h.Close()               // after the hand-offs: no more connections come
	d := time.Since(start).Round(time.Millisecond)
	if tk != nil && conns {
		<-tk.ConnsDone()
	}
	fmt.Println("drained", d, err, hc.String())
	return 0
}

// handCount counts a generation's hand-overs of idle connections: those
// it handed to its successor (HandOff) or failed to, and those it took
// from its predecessor (ReadyWith) and served or failed to.
type handCount struct {
	handed, failed, taken, unserved atomic.Int64
	firstErr                        atomic.Pointer[string]
}

// count adds one to ok or, with err, to failed.
func (h *handCount) count(ok, failed *atomic.Int64, err error) {
	if err == nil {
		ok.Add(1)
		return
	}
	failed.Add(1)
	s := err.Error()
	h.firstErr.CompareAndSwap(nil, &s)
}

// String is the counts as testRestartUnderLoad reads them: it wants
// failed=0 and unserved=0.
func (h *handCount) String() string {
	s := fmt.Sprintf("handed=%d failed=%d taken=%d unserved=%d", h.handed.Load(), h.failed.Load(), h.taken.Load(), h.unserved.Load())
	if e := h.firstErr.Load(); e != nil {
		s += " first error: " + *e
	}
	return s
}

// newServer serves GET /hello (its body names the process and echoes
// the query) and an echo WebSocket at /ws, which Shutdown closes with
// 1012.
func newServer(pid int) *httpd.Server {
	u := &websocket.Upgrader{Options: websocket.Options{Handler: echo{}}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello %s from %d", r.URL.Query().Get("n"), pid)
	})
	mux.HandleFunc("GET /ws", func(w http.ResponseWriter, r *http.Request) { u.Upgrade(w, r, nil) })
	srv := &httpd.Server{Handler: mux}
	srv.RegisterOnShutdown(func() {
		u.Shutdown(context.Background(), websocket.StatusServiceRestart, "restart")
	})
	return srv
}
