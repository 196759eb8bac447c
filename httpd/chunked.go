package httpd

import (
	"bufio"
	"bytes"
	"errors"
	"net/http"
	"net/textproto"
	"strconv"
)

// chunkedDecoder frames a chunked body (RFC 9112 section 7.1) on the loop,
// with the rules of net/http's reader: a chunk-size line ends with CRLF
// (a bare LF or a stray CR is refused), is shorter than 4 KiB, has at most
// 16 hex digits, may end in spaces or tabs and carry extensions (ignored
// after ';'); chunk data is followed by CRLF; framing beyond 16 KiB more
// than the data it carries is refused; and a trailer, if any, must end
// within 4 KiB. It works on the input the connection holds, consuming
// framing as it goes and leaving chunk data for the caller, so it keeps
// no buffer of its own.
type chunkedDecoder struct {
	n       uint64 // chunk data bytes still to come
	crlf    bool   // the CRLF after a chunk's data is next
	last    bool   // the last (zero) chunk was read: the trailer is next
	done    bool
	excess  int64 // framing bytes beyond what the data justifies
	held    int   // trailer bytes received, while the trailer is not whole
	trailer http.Header
}

const maxChunkLine = 4096

// The errors net/http's chunked reader gives, with its words.
var (
	errChunkBareLF  = errors.New("chunked line ends with bare LF")
	errChunkCR      = errors.New("invalid CR in chunked line")
	errChunkLine    = errors.New("header line too long")
	errChunkEmpty   = errors.New("empty hex number for chunk length")
	errChunkHex     = errors.New("invalid byte in chunk length")
	errChunkTooBig  = errors.New("http chunk length too large")
	errChunkExcess  = errors.New("chunked encoding contains too much non-data")
	errChunkCRLF    = errors.New("malformed chunked encoding")
	errChunkTrailer = errors.New("http: suspiciously long trailer after chunked body")
	errTrailerEOF   = errors.New("http: unexpected EOF reading trailer")
)

// frame consumes the framing at the front of p, up to the next chunk
// data (d.n > 0), the body's end (d.done) or the point where it needs
// more input, and returns how many bytes it consumed.
func (d *chunkedDecoder) frame(p []byte) (int, error) {
	used := 0
	for d.n == 0 && !d.done {
		rest := p[used:]
		switch {
		case d.crlf:
			if len(rest) < 2 {
				return used, nil
			}
			if rest[0] != '\r' || rest[1] != '\n' {
				return used, errChunkCRLF
			}
			used += 2
			d.crlf = false
		case d.last:
			k, err := d.readTrailer(rest)
			if err != nil || k == 0 {
				d.held = len(rest)
				return used, err
			}
			used += k
			d.done = true
		default:
			k, err := d.sizeLine(rest)
			if err != nil || k == 0 {
				return used, err
			}
			used += k
		}
	}
	return used, nil
}

// took records that the caller consumed n bytes of chunk data.
func (d *chunkedDecoder) took(n int) {
	d.n -= uint64(n)
	if d.n == 0 {
		d.crlf = true
	}
}

// sizeLine reads a chunk-size line, and returns its length with its CRLF,
// or 0 if it is not whole yet.
func (d *chunkedDecoder) sizeLine(p []byte) (int, error) {
	// net/http reads the line with ReadSlice from a 4 KiB bufio.Reader:
	// an LF past that is never seen.
	i := bytes.IndexByte(p[:min(len(p), maxChunkLine)], '\n')
	if i < 0 {
		if len(p) >= maxChunkLine {
			return 0, errChunkLine
		}
		return 0, nil
	}
	line := p[:i+1]
	switch cr := bytes.IndexByte(line, '\r'); {
	case cr < 0:
		return 0, errChunkBareLF
	case cr != len(line)-2:
		return 0, errChunkCR
	}
	line = line[:len(line)-2]
	if len(line) >= maxChunkLine {
		return 0, errChunkLine
	}
	d.excess += int64(len(line)) + 2
	line = bytes.TrimRight(line, " \t")
	if j := bytes.IndexByte(line, ';'); j >= 0 {
		line = line[:j]
	}
	n, err := parseHex(line)
	if err != nil {
		return 0, err
	}
	// As net/http computes it, int64 wrapping included: a size of 2^62
	// or more can make the excess huge (0x6000000000000000 is refused).
	d.excess -= 16 + 2*int64(n)
	d.excess = max(d.excess, 0)
	if d.excess > 16<<10 {
		return 0, errChunkExcess
	}
	if n == 0 {
		d.last = true
	} else {
		d.n = n
	}
	return i + 1, nil
}

func parseHex(v []byte) (uint64, error) {
	if len(v) == 0 {
		return 0, errChunkEmpty
	}
	var n uint64
	for i, b := range v {
		switch {
		case '0' <= b && b <= '9':
			b -= '0'
		case 'a' <= b && b <= 'f':
			b = b - 'a' + 10
		case 'A' <= b && b <= 'F':
			b = b - 'A' + 10
		default:
			return 0, errChunkHex
		}
		if i == 16 {
			return 0, errChunkTooBig
		}
		n = n<<4 | uint64(b)
	}
	return n, nil
}

// readTrailer reads what follows the last chunk: a CRLF alone, or
// trailer fields ending with a blank line. It returns their length, or 0
// if they are not whole yet.
func (d *chunkedDecoder) readTrailer(p []byte) (int, error) {
	if len(p) < 2 {
		return 0, nil
	}
	if p[0] == '\r' && p[1] == '\n' {
		return 2, nil
	}
	// net/http waits for a CRLFCRLF within the 4 KiB its bufio.Reader
	// holds, then parses the trailer with ReadMIMEHeader, which ends it at
	// the first empty line: that may come before, ending with a bare LF
	// ("X: 1\n\n"), and what follows it is the next request.
	i := bytes.Index(p[:min(len(p), maxChunkLine)], []byte("\r\n\r\n"))
	if i < 0 {
		if len(p) >= maxChunkLine {
			return 0, errChunkTrailer
		}
		return 0, nil
	}
	src := bytes.NewReader(p[:i+4])
	br := bufio.NewReader(src)
	h, err := textproto.NewReader(br).ReadMIMEHeader()
	if err != nil {
		return 0, err
	}
	d.trailer = http.Header(h)
	return i + 4 - src.Len() - br.Buffered(), nil
}

// atEOF returns the error net/http's body reader gives when the
// connection ends before the body does.
func (d *chunkedDecoder) atEOF() error {
	switch {
	case !d.last:
		return errUnexpectedEOF
	case d.held < 2:
		return errTrailerEOF
	}
	return errChunkTrailer
}

// resume returns the rest of a chunked body for a hijack, as chunked
// framing: unread, the data the loop decoded and the handler did not
// read, framed as one chunk (the current chunk's part still to come
// included in its size), with the framing the decoder consumed that the
// client's next bytes do not repeat (the CRLF before the next size line,
// the last chunk, the trailer). The client's bytes from where the
// decoder stopped follow it on the hijacked connection, so the two make a
// valid chunked stream of the same data. With nothing unread it returns
// nil: the stream resumes where decoding stopped, as net/http's does
// where its reader stopped.
func (d *chunkedDecoder) resume(unread []byte) []byte {
	if len(unread) == 0 {
		return nil
	}
	b := strconv.AppendUint(nil, uint64(len(unread))+d.n, 16)
	b = append(b, "\r\n"...)
	b = append(b, unread...)
	if d.n > 0 || d.crlf {
		return b // the client's bytes go on with the chunk's data, or its CRLF
	}
	b = append(b, "\r\n"...)
	if !d.last {
		return b // the next size line comes
	}
	b = append(b, "0\r\n"...)
	if !d.done {
		return b // the trailer comes
	}
	var t bytes.Buffer
	d.trailer.Write(&t)
	b = append(b, t.Bytes()...)
	return append(b, "\r\n"...)
}
