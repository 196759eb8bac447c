package gorilla

import (
	"errors"
	"net"
	"time"
)

// netConn is NetConn's net.Conn: the Conn's addresses, Close and
// deadlines, no Read or Write (the loop owns the socket).
type netConn Conn

var errNetConn = errors.Join(errors.New("websocket: the connection is gale's loop's: use Conn's methods"), errors.ErrUnsupported)

func (n *netConn) Read([]byte) (int, error)           { return 0, errNetConn }
func (n *netConn) Write([]byte) (int, error)          { return 0, errNetConn }
func (n *netConn) Close() error                       { return (*Conn)(n).Close() }
func (n *netConn) LocalAddr() net.Addr                { return n.local }
func (n *netConn) RemoteAddr() net.Addr               { return n.remote }
func (n *netConn) SetReadDeadline(t time.Time) error  { return (*Conn)(n).SetReadDeadline(t) }
func (n *netConn) SetWriteDeadline(t time.Time) error { return (*Conn)(n).SetWriteDeadline(t) }
func (n *netConn) SetDeadline(t time.Time) error {
	(*Conn)(n).SetReadDeadline(t)
	return (*Conn)(n).SetWriteDeadline(t)
}
