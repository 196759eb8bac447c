package websocket_test

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/galeio/gale/websocket"
)

// With Compression set on both sides, permessage-deflate is agreed on
// in the handshake, and messages of CompressionThreshold bytes or more
// go compressed. CompressionEnabled refuses the peer's context takeover,
// so that a connection keeps no window between messages;
// CompressionContextTakeover accepts it, for up to 32 KiB a connection.
func ExampleCompressionMode() {
	url, stop := serveEcho(websocket.Options{Compression: websocket.CompressionEnabled})
	defer stop()

	e, err := websocket.NewEngine(engineOptions())
	if err != nil {
		panic(err)
	}
	defer e.Stop()
	p := printer{got: make(chan struct{})}
	d := &websocket.Dialer{Options: websocket.Options{
		Handler:     p,
		Engine:      e,
		Compression: websocket.CompressionEnabled,
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, _, err := d.Dial(ctx, url)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("compressed:", c.Compressed())
	c.WriteMessage(websocket.TextMessage, []byte("a message long enough to be worth compressing, repeated: a message long enough"))
	<-p.got
	c.Close(websocket.StatusNormalClosure, "")
	// Output:
	// compressed: true
	// text: a message long enough to be worth compressing, repeated: a message long enough
}

// sizer prints the size of each message it receives.
type sizer struct {
	websocket.BaseHandler
	got chan struct{}
}

func (s sizer) OnMessage(c *websocket.Conn, typ websocket.MessageType, data []byte) {
	fmt.Printf("%s: %d bytes\n", typ, len(data))
	close(s.got)
}

// A message is held whole until OnMessage, up to ReadLimit, and output a
// peer has not read yet is queued up to MaxQueued; both default to 1 MiB
// (DefaultReadLimit, DefaultMaxQueued). A larger message closes the
// connection with 1009 (StatusMessageTooBig), and so an echo server built
// from the README's example fails the Autobahn testsuite's cases with 4
// to 16 MiB messages (9.1.4–9.1.6, 9.2.4–9.2.6, 9.3 and 9.4). Two lines
// of its Options raise both to the suite's largest message:
//
//	ReadLimit: 16 << 20,
//	MaxQueued: 16 << 20,
//
// (The repository's own Autobahn runs, in CI, set both to 64 MiB.) Raise
// them only as far as the messages a server must take: each connection
// may then hold that much, in and out.
func ExampleOptions() {
	big := websocket.Options{
		ReadLimit: 16 << 20,
		MaxQueued: 16 << 20,
	}
	url, stop := serveEcho(big)
	defer stop()

	e, err := websocket.NewEngine(engineOptions())
	if err != nil {
		panic(err)
	}
	defer e.Stop()
	s := sizer{got: make(chan struct{})}
	big.Handler, big.Engine = s, e // the client takes the echo back whole too
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, _, err := (&websocket.Dialer{Options: big}).Dial(ctx, url)
	if err != nil {
		fmt.Println(err)
		return
	}
	c.WriteMessage(websocket.BinaryMessage, bytes.Repeat([]byte{'x'}, 4<<20))
	<-s.got
	c.Close(websocket.StatusNormalClosure, "")
	// Output: binary: 4194304 bytes
}
