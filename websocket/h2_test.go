package websocket_test

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/galeio/gale/httpd"
	"github.com/galeio/gale/websocket"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// serveH2 serves u's upgrades on an httpd.Server with h2c and extended
// CONNECT, and returns its address.
func serveH2(t *testing.T, u *websocket.Upgrader) string {
	t.Helper()
	p := new(http.Protocols)
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	srv := &httpd.Server{Protocols: p, ExtendedConnect: true, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.Upgrade(w, r, nil)
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// TestUpgradeOverHTTP2: an extended CONNECT with :protocol websocket
// (RFC 8441) is answered 200, and the stream's DATA then carries the
// WebSocket's frames both ways; the client's close is answered.
func TestUpgradeOverHTTP2(t *testing.T) {
	e, err := websocket.NewEngine(engineOptions()) // the relayed streams' loops
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Stop() })
	addr := serveH2(t, &websocket.Upgrader{Options: websocket.Options{Handler: echoHandler{}, Engine: e}})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, http2.ClientPreface)
	fr := http2.NewFramer(c, c)
	fr.WriteSettings()
	var block bytes.Buffer
	enc := hpack.NewEncoder(&block)
	for _, f := range [][2]string{{":method", "CONNECT"}, {":protocol", "websocket"}, {":scheme", "http"},
		{":path", "/chat"}, {":authority", addr}, {"sec-websocket-version", "13"}} {
		enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
	}
	fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block.Bytes(), EndHeaders: true})
	dec := hpack.NewDecoder(4096, nil)
	status := ""
	var echo []byte
	// A masked text frame, "hi", then a masked close (1000).
	fr.WriteData(1, false, []byte{0x81, 0x82, 1, 2, 3, 4, 'h' ^ 1, 'i' ^ 2})
	for len(echo) < 4 {
		f, err := fr.ReadFrame()
		if err != nil {
			t.Fatalf("reading: %v (status %q, echo %x)", err, status, echo)
		}
		switch f := f.(type) {
		case *http2.HeadersFrame:
			fields, _ := dec.DecodeFull(f.HeaderBlockFragment())
			for _, hf := range fields {
				if hf.Name == ":status" {
					status = hf.Value
				}
			}
		case *http2.DataFrame:
			echo = append(echo, f.Data()...)
		case *http2.RSTStreamFrame:
			t.Fatalf("RST_STREAM %v", f.ErrCode)
		}
	}
	if status != "200" || !bytes.Equal(echo, []byte{0x81, 2, 'h', 'i'}) {
		t.Fatalf("status %q, echo %x", status, echo)
	}
}
