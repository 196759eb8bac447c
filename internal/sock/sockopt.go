package sock

// Opt names an integer socket option SetsockoptInt sets: sock's own names,
// so that callers need no x/sys/unix constants.
type Opt uint8

// The integer socket options gale sets.
const (
	NoDelay   Opt = iota // TCP_NODELAY, tcp(7)
	KeepAlive            // SO_KEEPALIVE, socket(7)
	RcvBuf               // SO_RCVBUF
	SndBuf               // SO_SNDBUF
	ReusePort            // SO_REUSEPORT
)
