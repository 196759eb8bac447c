package tlsrec_test

import (
	"bytes"
	"crypto/tls"
	"testing"

	"github.com/galeio/gale/internal/tlsrec"
)

// feed hands raw to e's tls.Conn the way the engine's loop does: cut into
// the chunks cuts gives (as the socket might deliver them), each appended
// to the bytes kept from before, of which only the whole records are
// offered; the partial record left is kept for the next chunk. It returns
// the plaintext and the first error other than ErrWouldBlock.
func feed(e *end, raw, cuts []byte) ([]byte, error) {
	var kept, plain []byte
	buf := make([]byte, 8<<10)
	for len(raw) > 0 {
		n := len(raw)
		if len(cuts) > 0 {
			n = min(n, 1+int(cuts[0])*int(cuts[0])) // 1 byte to 64 KiB
			cuts = cuts[1:]
		}
		kept = append(kept, raw[:n]...)
		raw = raw[n:]
		end := tlsrec.Complete(kept)
		e.tr.Offer(kept[:end])
		for {
			k, err := e.tc.Read(buf)
			plain = append(plain, buf[:k]...)
			if tlsrec.IsWouldBlock(err) {
				break
			}
			if err != nil {
				return plain, err
			}
		}
		if e.tr.Unread() != 0 {
			panic("records left unread after ErrWouldBlock")
		}
		kept = append(kept[:0], kept[end:]...)
		e.tr.Offer(nil)
	}
	return plain, nil
}

// FuzzRecordSplit checks that records cut anywhere, in any number of
// pieces, decrypt to what was written.
func FuzzRecordSplit(f *testing.F) {
	f.Add([]byte("hello"), []byte{1, 2, 3})
	f.Add(bytes.Repeat([]byte("x"), 40000), []byte{0, 200, 7, 255, 255})
	f.Add([]byte{}, []byte{})
	f.Fuzz(func(t *testing.T, msg, cuts []byte) {
		sc, cc := configs()
		s, c := pair(t, sc, cc)
		// The client's messages: msg in the pieces the first cuts give.
		for rest := msg; len(rest) > 0; {
			n := len(rest)
			if len(cuts) > 0 {
				n, cuts = min(n, 1+int(cuts[0])*64), cuts[1:]
			}
			if _, err := c.tc.Write(rest[:n]); err != nil {
				t.Fatal(err)
			}
			rest = rest[n:]
		}
		got, err := feed(s, c.takeOut(), cuts)
		if err != nil || !bytes.Equal(got, msg) {
			t.Fatalf("read %d bytes, %v; want the %d written", len(got), err, len(msg))
		}
	})
}

// FuzzRecordGarbage checks that whatever follows a valid record (any
// bytes, cut anywhere) ends in plaintext or an error, never a panic, a
// hang or a record decrypted twice, and that the valid record's plaintext
// comes first.
func FuzzRecordGarbage(f *testing.F) {
	f.Add([]byte{23, 3, 3, 0, 5, 1, 2, 3, 4, 5}, []byte{2})
	f.Add([]byte{21, 3, 3, 0, 2, 1, 0}, []byte{})
	f.Add([]byte{22, 3, 3, 0, 4, 0, 0, 0, 0}, []byte{1, 1, 1})
	f.Add([]byte{23, 3, 3, 0xff, 0xff}, []byte{})
	f.Add([]byte{20, 3, 3, 0, 1, 1}, []byte{0})
	f.Fuzz(func(t *testing.T, garbage, cuts []byte) {
		for _, v := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
			sc, cc := configs()
			sc.MaxVersion = v
			s, c := pair(t, sc, cc)
			c.tc.Write([]byte("valid"))
			raw := append(c.takeOut(), garbage...)
			got, _ := feed(s, raw, cuts)
			if !bytes.HasPrefix(got, []byte("valid")) {
				t.Fatalf("%s: plaintext %q does not start with the valid record's", tls.VersionName(v), got)
			}
		}
	})
}
