package websocket

import (
	"fmt"
	"io"
	"net"
)

// relay serves tc, a TLS connection net/http terminated or an HTTP/2
// stream (h2.go) or a Dialer.NetDialContext connection without a
// descriptor, through a socket pair: it returns one end for the
// engine to adopt, and two goroutines copy between the other end and tc
// (decrypting one way, encrypting the other). input is what was read
// from tc already; it goes first. When either side ends, the other is
// shut down, and everything is closed once both copies are over.
// halfConn is the relay's end of the pair: a stream it can half-close.
type halfConn interface {
	net.Conn
	CloseWrite() error
}

func relay(tc io.ReadWriteCloser, input []byte) (net.Conn, error) {
	inner, outer, err := socketPair()
	if err != nil {
		tc.Close()
		return nil, fmt.Errorf("websocket: relay for TLS: %w", err)
	}
	fromPeer := make(chan struct{})
	go func() { // peer → loop
		defer close(fromPeer)
		if _, err := outer.Write(input); err == nil {
			io.Copy(outer, tc)
		}
		outer.CloseWrite()
	}()
	go func() { // loop → peer
		io.Copy(tc, outer)
		tc.Close() // ends the other copy's Read
		<-fromPeer
		outer.Close()
	}()
	return inner, nil
}
