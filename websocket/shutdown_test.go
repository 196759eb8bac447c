package websocket_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/httpd"
	"github.com/galeio/gale/websocket"
)

// TestShutdownServiceRestart shuts an httpd.Server down with two open
// WebSockets: the Upgrader's Shutdown, registered with RegisterOnShutdown,
// sends each a close frame with 1012, the clients answer, and the
// server's Shutdown returns once they have closed, well within its
// context. Before Upgrader.Shutdown, the server's Shutdown waited for its
// context with the connections left open.
func TestShutdownServiceRestart(t *testing.T) {
	srvRec := newRecorder(true)
	u := &websocket.Upgrader{Options: websocket.Options{Handler: srvRec}}
	mux := http.NewServeMux()
	mux.HandleFunc("/ws", func(w http.ResponseWriter, r *http.Request) { u.Upgrade(w, r, nil) })
	s := &httpd.Server{Handler: mux, Engine: engine.Options{Loops: 2}}
	s.RegisterOnShutdown(func() {
		u.Shutdown(context.Background(), websocket.StatusServiceRestart, "restart")
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(ln)
	defer s.Close()
	url := "ws://" + ln.Addr().String() + "/ws"
	var clis []*recorder
	for range 2 {
		cli := newRecorder(false)
		dial(t, &websocket.Dialer{Options: websocket.Options{Handler: cli}}, url)
		cli.expect(t, "open")
		srvRec.expect(t, "open")
		clis = append(clis, cli)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	start := time.Now()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown = %v, want nil once the WebSockets closed", err)
	}
	t.Logf("Shutdown with 2 WebSockets took %v", time.Since(start))
	for i, cli := range clis {
		ev := cli.expect(t, "close")
		var ce *websocket.CloseError
		if !errors.As(ev.err, &ce) || ce.Code != websocket.StatusServiceRestart || ce.Reason != "restart" {
			t.Errorf("client %d OnClose(%v), want the close frame 1012 restart", i, ev.err)
		}
	}
	if err := u.Shutdown(ctx, websocket.StatusServiceRestart, ""); err != nil {
		t.Errorf("second Shutdown = %v, want nil (none left)", err)
	}
}

// TestShutdownLateUpgrade checks that a connection upgraded after the
// Upgrader's Shutdown began is told to go as soon as it opens, and that
// Shutdown refuses a code that may not be sent.
func TestShutdownLateUpgrade(t *testing.T) {
	u := &websocket.Upgrader{Options: websocket.Options{Handler: newRecorder(true)}}
	if err := u.Shutdown(context.Background(), websocket.StatusNoStatusRcvd, ""); err == nil {
		t.Error("Shutdown(1005) = nil, want an error: 1005 is never sent")
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := u.Shutdown(ctx, websocket.StatusGoingAway, "bye"); err != nil {
		t.Fatalf("Shutdown with no connection = %v, want nil", err)
	}
	url := serveWS(t, u, false)
	cli := newRecorder(false)
	dial(t, &websocket.Dialer{Options: websocket.Options{Handler: cli}}, url)
	cli.expect(t, "open")
	if ev := cli.expect(t, "close"); websocket.CloseStatus(ev.err) != websocket.StatusGoingAway {
		t.Errorf("late client OnClose(%v), want 1001", ev.err)
	}
}
