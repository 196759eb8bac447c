package netconn_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
)

// The tests that move bulk data (copy, http, tls) send a deterministic
// stream and have the receiver regenerate it and compare byte for byte,
// reporting the first offset that differs. Generating must stay cheap
// under -race (a ChaCha8 stream runs at about 0.5 GB/s there), so the
// stream is a random table repeated, each repetition stamped with its
// index in its first 8 bytes, and shifted per seed so that the streams of
// two directions differ at every offset.

// patternLen is the table's length: odd, so prime to every buffer size in
// play (io.Copy's 32 KiB, the stash's 64 KiB), and a chunk delivered in
// another chunk's place does not compare equal.
const patternLen = 1<<20 + 7

var patternTable = func() []byte {
	b := make([]byte, patternLen)
	rand.NewChaCha8([32]byte{'g', 'a', 'l', 'e'}).Read(b)
	return b
}()

// fillPattern writes the bytes of stream seed at offset off into p.
func fillPattern(p []byte, seed uint64, off int64) {
	shift := int64(seed*104729) % patternLen
	for len(p) > 0 {
		pos := off + shift
		i, rep := pos%patternLen, pos/patternLen
		k := copy(p, patternTable[i:])
		if i < 8 {
			var stamp [8]byte
			binary.LittleEndian.PutUint64(stamp[:], uint64(rep)^seed<<48)
			copy(p[:k], stamp[i:])
		}
		p, off = p[k:], off+int64(k)
	}
}

// patternReader reads n bytes of stream seed, then io.EOF.
type patternReader struct {
	seed   uint64
	off, n int64
}

func newPattern(seed uint64, n int64) *patternReader { return &patternReader{seed: seed, n: n} }

func (r *patternReader) Read(p []byte) (int, error) {
	left := r.n - r.off
	if left <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > left {
		p = p[:left]
	}
	fillPattern(p, r.seed, r.off)
	r.off += int64(len(p))
	return len(p), nil
}

// patternChecker is an io.Writer that compares what it is given with
// stream seed; its first mismatch fails that Write and every later one.
type patternChecker struct {
	seed uint64
	off  int64
	want []byte
	err  error
}

func newChecker(seed uint64) *patternChecker { return &patternChecker{seed: seed} }

func (c *patternChecker) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	for done := 0; done < len(p); {
		chunk := p[done:min(len(p), done+64<<10)]
		if cap(c.want) < len(chunk) {
			c.want = make([]byte, 64<<10)
		}
		want := c.want[:len(chunk)]
		fillPattern(want, c.seed, c.off)
		if !bytes.Equal(chunk, want) {
			i := 0
			for chunk[i] == want[i] {
				i++
			}
			c.err = fmt.Errorf("stream %d: byte %d = %#02x, want %#02x", c.seed, c.off+int64(i), chunk[i], want[i])
			return done + i, c.err
		}
		done += len(chunk)
		c.off += int64(len(chunk))
	}
	return len(p), nil
}

// check reports a mismatch, or a length other than n.
func (c *patternChecker) check(n int64) error {
	if c.err != nil {
		return c.err
	}
	if c.off != n {
		return fmt.Errorf("stream %d: got %d bytes, want %d", c.seed, c.off, n)
	}
	return nil
}
