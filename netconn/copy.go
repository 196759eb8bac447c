package netconn

import (
	"io"
	"os"
	"sync"
)

// copyBufs lends io.Copy's buffers to ReadFrom and WriteTo when no
// system call moves the bytes for them.
var copyBufs = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

// ReadFrom implements io.ReaderFrom, which io.Copy uses: from a file
// (*os.File, or an io.LimitedReader around one) the kernel sends the
// bytes itself (sendfile(2) on Linux); from anything else they go
// through a pooled 64 KiB buffer and Write.
func (c *Conn) ReadFrom(r io.Reader) (int64, error) {
	if n, handled, err := c.sendFile(r); handled {
		return n, err
	}
	return genericCopy(writerOnly{c}, r)
}

// WriteTo implements io.WriterTo, which io.Copy uses: into a file
// (*os.File) the kernel moves the bytes itself (splice(2) through a pipe
// on Linux), after those already received; into anything else they go
// through a pooled buffer and Read. It returns at the end of the stream
// (nil error), or at the first error.
func (c *Conn) WriteTo(w io.Writer) (int64, error) {
	if f, ok := w.(*os.File); ok {
		if n, handled, err := c.spliceTo(f); handled {
			return n, err
		}
	}
	return genericCopy(w, readerOnly{c})
}

func genericCopy(w io.Writer, r io.Reader) (int64, error) {
	b := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(b)
	return io.CopyBuffer(w, r, *b)
}

// writerOnly and readerOnly hide ReadFrom and WriteTo from io.CopyBuffer,
// which would call them back.
type writerOnly struct{ io.Writer }

type readerOnly struct{ io.Reader }
