package netconn

import (
	"io"
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// maxSendfile bounds one sendfile(2), as package net does.
const maxSendfile = 4 << 20

// sendFile sends r's bytes with sendfile(2) when r is a file, or an
// io.LimitedReader around one; handled is false when it is neither.
func (c *Conn) sendFile(r io.Reader) (written int64, handled bool, err error) {
	remain := int64(1 << 62)
	lr, limited := r.(*io.LimitedReader)
	if limited {
		remain, r = lr.N, lr.R
		if remain <= 0 {
			return 0, true, nil
		}
	}
	f, ok := r.(*os.File)
	if !ok {
		return 0, false, nil
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return 0, false, nil
	}
	sc, err := f.SyscallConn()
	if err != nil {
		return 0, false, nil
	}
	c.wr.serial.Lock()
	defer c.wr.serial.Unlock()
	var serr error
	cerr := sc.Control(func(src uintptr) {
		written, serr = c.sendfileLoop(int(src), remain)
	})
	if limited {
		lr.N -= written
	}
	if cerr != nil && serr == nil {
		serr = cerr
	}
	return written, true, serr
}

func (c *Conn) sendfileLoop(src int, remain int64) (int64, error) {
	var written int64
	for remain > 0 {
		if c.closed.Load() {
			return written, c.opError("sendfile", net.ErrClosed)
		}
		d := c.wr.deadline.Load()
		if passed(d) {
			return written, c.opError("sendfile", errTimeout)
		}
		fd, ok := c.fd.Acquire()
		if !ok {
			return written, c.opError("sendfile", net.ErrClosed)
		}
		n, err := unix.Sendfile(fd, src, nil, int(min(remain, maxSendfile)))
		if err == unix.EAGAIN {
			err = pollWait(fd, unix.POLLOUT, d)
		}
		c.fd.Release()
		if n > 0 {
			written += int64(n)
			remain -= int64(n)
		}
		switch {
		case err == nil && n == 0:
			return written, nil // the file ended
		case err == nil, err == unix.EINTR, err == unix.EAGAIN:
		default:
			return written, c.opError("sendfile", os.NewSyscallError("sendfile", err))
		}
	}
	return written, nil
}

// spliceTo moves the stream into f with splice(2) through a pipe: first
// the bytes the loop received ahead, then the socket's, read by splice
// itself once the loop stopped receiving. handled is false when no pipe
// can be made.
func (c *Conn) spliceTo(f *os.File) (int64, bool, error) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC|unix.O_NONBLOCK); err != nil {
		return 0, false, nil
	}
	defer unix.Close(p[0])
	defer unix.Close(p[1])
	buffered, err := c.takeBuffered()
	if err != nil {
		return 0, true, err
	}
	defer c.resumeReading()
	written := int64(0)
	if len(buffered) > 0 {
		n, err := f.Write(buffered)
		written += int64(n)
		if err != nil {
			return written, true, err
		}
	}
	sc, err := f.SyscallConn()
	if err != nil {
		return written, true, err
	}
	var serr error
	var n int64
	cerr := sc.Control(func(dst uintptr) { n, serr = c.spliceLoop(p, int(dst)) })
	written += n
	if serr == nil {
		serr = cerr
	}
	return written, true, serr
}

func (c *Conn) spliceLoop(p [2]int, dst int) (int64, error) {
	var written int64
	for {
		if c.closed.Load() {
			return written, c.opError("splice", net.ErrClosed)
		}
		d := c.rd.deadline.Load()
		if passed(d) {
			return written, c.opError("splice", errTimeout)
		}
		fd, ok := c.fd.Acquire()
		if !ok {
			return written, c.opError("splice", net.ErrClosed)
		}
		n, err := unix.Splice(fd, nil, p[1], nil, maxSendfile, unix.SPLICE_F_NONBLOCK|unix.SPLICE_F_MOVE)
		if err == unix.EAGAIN {
			err = pollWait(fd, unix.POLLIN, d)
		}
		c.fd.Release()
		switch {
		case err == nil && n == 0:
			c.rd.failed(io.EOF) // every later Read sees the end too
			return written, nil
		case err == unix.EINTR, err == unix.EAGAIN:
			continue
		case err != nil:
			return written, c.opError("splice", os.NewSyscallError("splice", err))
		}
		for left := n; left > 0; {
			m, err := unix.Splice(p[0], nil, dst, nil, int(left), unix.SPLICE_F_MOVE)
			if err == unix.EINTR || err == unix.EAGAIN {
				continue
			}
			if err != nil {
				return written, c.opError("splice", os.NewSyscallError("splice", err))
			}
			left -= m
			written += m
		}
	}
}
