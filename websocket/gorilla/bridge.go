package gorilla

import (
	"math"

	"github.com/galeio/gale/websocket"
)

// bridge is the gale Handler of every gorilla Conn: it runs on the loop,
// and queues what comes in the Conn's inbox (the Conn is the gale
// connection's value, given at the upgrade or dial).
type bridge struct{}

// handler is every connection's; its loop-side methods never block.
var handler websocket.Handler = bridge{}

// options are the gale options of every Upgrader's and Dialer's
// connections: reads in pieces, of any length (SetReadLimit caps them,
// per connection); writes queue up to MaxQueued, which the writers' wait
// (writeHigh) keeps them under.
func options(compress bool) websocket.Options {
	o := websocket.Options{Handler: handler, ReadLimit: math.MaxInt, MaxQueued: maxQueued}
	if compress {
		o.Compression = websocket.CompressionEnabled
	}
	return o
}

func conn(c *websocket.Conn) *Conn {
	gc := c.Context().(*Conn)
	gc.setWS(c)
	return gc
}

func (bridge) OnOpen(c *websocket.Conn) { conn(c) }

// OnMessage is never called: bridge is a StreamHandler.
func (bridge) OnMessage(*websocket.Conn, websocket.MessageType, []byte) {}

func (bridge) OnClose(c *websocket.Conn, err error) {
	gc := conn(c)
	gc.in.push(c, item{kind: itemEnd, err: readError(err)})
}

func (bridge) OnMessageStart(c *websocket.Conn, typ websocket.MessageType) {
	gc := conn(c)
	gc.loopMsgN = 0
	if gc.loopDrop {
		return
	}
	gc.in.push(c, item{kind: itemStart, typ: int(typ)})
}

func (bridge) OnMessageData(c *websocket.Conn, chunk []byte, final bool) {
	gc := conn(c)
	if gc.loopDrop {
		return
	}
	gc.loopMsgN += int64(len(chunk))
	if limit := gc.readLimit.Load(); limit > 0 && gc.loopMsgN > limit {
		// As gorilla: a close frame 1009, and ErrReadLimit for the
		// reader once it reaches this point; nothing more is queued.
		gc.loopDrop = true
		c.Close(websocket.StatusMessageTooBig, "")
		gc.in.push(c, item{kind: itemEnd, err: ErrReadLimit})
		return
	}
	gc.in.push(c, item{kind: itemData, data: append([]byte(nil), chunk...), final: final})
}

func (bridge) OnPing(c *websocket.Conn, data []byte) {
	gc := conn(c)
	if !gc.loopDrop {
		gc.in.push(c, item{kind: itemPing, data: append([]byte(nil), data...)})
	}
}

func (bridge) OnPong(c *websocket.Conn, data []byte) {
	gc := conn(c)
	if !gc.loopDrop {
		gc.in.push(c, item{kind: itemPong, data: append([]byte(nil), data...)})
	}
}
