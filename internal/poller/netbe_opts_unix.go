//go:build unix

package poller

import "golang.org/x/sys/unix"

// Package net sets options on every TCP socket it wraps or accepts
// (TCP_NODELAY, and keep-alive every 15 seconds): the net backend puts
// back what the socket had, so that choosing the backend changes no
// socket's behaviour. sockOpts are the options it keeps (keptOpts adds
// the keep-alive timing where the system has it).

// sockOpt is one socket option: level and name.
type sockOpt struct{ level, name int }

// optSnapshot holds the values of sockOpts and keptOpts on one socket.
type optSnapshot struct {
	ok   bool
	vals [8]int
}

func allOpts() []sockOpt {
	return append([]sockOpt{{unix.IPPROTO_TCP, unix.TCP_NODELAY}, {unix.SOL_SOCKET, unix.SO_KEEPALIVE}}, keptOpts...)
}

// snapshotOpts reads fd's options; ok is false for a socket that is not
// TCP (the reads fail), which package net leaves alone.
func snapshotOpts(fd int) optSnapshot {
	var s optSnapshot
	for i, o := range allOpts() {
		v, err := unix.GetsockoptInt(fd, o.level, o.name)
		if err != nil {
			return optSnapshot{}
		}
		s.vals[i] = v
	}
	s.ok = true
	return s
}

// restore sets fd's options back to s.
func (s optSnapshot) restore(fd int) {
	if !s.ok {
		return
	}
	for i, o := range allOpts() {
		unix.SetsockoptInt(fd, o.level, o.name, s.vals[i])
	}
}
