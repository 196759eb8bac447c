package websocket_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"hash"
	"time"

	"github.com/galeio/gale/websocket"
)

// digester takes messages in pieces (it is a StreamHandler): it hashes
// each as it arrives, never holding it, and answers with its size and
// the start of its SHA-256.
type digester struct{ websocket.BaseHandler }

// digest is a connection's message so far: its Context.
type digest struct {
	h hash.Hash
	n int
}

func (digester) OnOpen(c *websocket.Conn) { c.SetContext(&digest{h: sha256.New()}) }

func (digester) OnMessageStart(c *websocket.Conn, typ websocket.MessageType) {
	d := c.Context().(*digest)
	d.h.Reset()
	d.n = 0
}

func (digester) OnMessageData(c *websocket.Conn, chunk []byte, final bool) {
	d := c.Context().(*digest)
	d.h.Write(chunk) // chunk is valid only during the call
	d.n += len(chunk)
	if final {
		c.WriteMessage(websocket.TextMessage, fmt.Appendf(nil, "%d bytes, sha256 %x", d.n, d.h.Sum(nil)[:8]))
	}
}

// A server that takes messages of up to 64 MiB without holding any: its
// Handler is a StreamHandler, so each message comes in pieces as its
// frames arrive (compressed ones decompressed a piece at a time), and
// the connection holds no more of it than a piece. ReadLimit still caps
// the whole, and a handler whose consumer falls behind calls PauseRead.
func ExampleStreamHandler() {
	url, stop := serveOptions(websocket.Options{
		Handler:     digester{},
		ReadLimit:   64 << 20,
		Compression: websocket.CompressionEnabled,
	})
	defer stop()

	e, err := websocket.NewEngine(engineOptions())
	if err != nil {
		panic(err)
	}
	defer e.Stop()
	p := printer{got: make(chan struct{})}
	d := &websocket.Dialer{Options: websocket.Options{Handler: p, Engine: e, Compression: websocket.CompressionEnabled}}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, _, err := d.Dial(ctx, url)
	if err != nil {
		fmt.Println(err)
		return
	}
	c.WriteMessage(websocket.BinaryMessage, bytes.Repeat([]byte("stream me; "), 1<<20))
	<-p.got
	c.Close(websocket.StatusNormalClosure, "")
	// Output: text: 11534336 bytes, sha256 4e3792dfad7a5008
}
