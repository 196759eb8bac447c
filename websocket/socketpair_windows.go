package websocket

import (
	"errors"
	"net"
)

// socketPair returns the two ends of a loopback TCP connection: Windows
// has no socketpair(2), and its AF_UNIX sockets cannot be had
// everywhere (not under Wine). A connection that reaches the listener
// from elsewhere in the short while it listens is closed, and the pair
// is the one made by the dial.
func socketPair() (inner net.Conn, outer halfConn, err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, err
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		return nil, nil, err
	}
	for range 8 {
		a, err := ln.Accept()
		if err != nil {
			c.Close()
			return nil, nil, err
		}
		if a.RemoteAddr().String() == c.LocalAddr().String() {
			return a, c.(*net.TCPConn), nil
		}
		a.Close() // not ours
	}
	c.Close()
	return nil, nil, errors.New("websocket: relay pair: other connections reached its listener")
}
