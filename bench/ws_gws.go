package main

import (
	"net"

	"github.com/lxzan/gws"
)

var wsGws = wsServer{name: "gws", version: "github.com/lxzan/gws v1.10.2", serve: serveWsGws,
	note: "its Quick Start server: gws.NewServer(handler, nil) (its own HTTP upgrade, a goroutine per connection running ReadLoop; default options: no compression, no parallel processing) with the Best Practice's OnMessage: WriteMessage(message.Opcode, message.Bytes()), then message.Close()"}

// wsGwsEcho is gws's Event: the README's echo OnMessage, nothing else.
type wsGwsEcho struct{ gws.BuiltinEventHandler }

func (wsGwsEcho) OnMessage(socket *gws.Conn, message *gws.Message) {
	defer message.Close()
	socket.WriteMessage(message.Opcode, message.Bytes())
}

// serveWsGws is gws's Quick Start: NewServer on the listener. gws's
// server answers any path.
func serveWsGws(ln net.Listener) error {
	return gws.NewServer(wsGwsEcho{}, nil).RunListener(ln)
}
