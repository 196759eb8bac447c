package netconn_test

import (
	"bytes"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/galeio/gale/internal/testkit/backendtest"
)

// TestFileCopy sends a file over a conn with io.Copy (ReadFrom: sendfile)
// and stores what arrives in a file (WriteTo: splice), on every backend:
// the two files match, the whole file and a limited part of it.
func TestFileCopy(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) {
		dir := backendtest.TempDir(t)
		data := make([]byte, 8<<20+123)
		rng := rand.New(rand.NewPCG(1, 2))
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		src := filepath.Join(dir, "src")
		if err := os.WriteFile(src, data, 0o600); err != nil {
			t.Fatal(err)
		}
		for _, limit := range []int64{-1, 5<<20 + 7} {
			c1, c2, stop, err := pipe(t, "tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			want := data
			if limit >= 0 {
				want = data[:limit]
			}
			go func() {
				f, err := os.Open(src)
				if err != nil {
					t.Error(err)
					return
				}
				defer f.Close()
				var r io.Reader = f
				if limit >= 0 {
					r = io.LimitReader(f, limit)
				}
				n, err := io.Copy(c1, r)
				if err != nil || n != int64(len(want)) {
					t.Errorf("send: %d bytes, %v; want %d", n, err, len(want))
				}
				c1.(interface{ CloseWrite() error }).CloseWrite()
			}()
			dst, err := os.Create(filepath.Join(dir, "dst"))
			if err != nil {
				t.Fatal(err)
			}
			n, err := io.Copy(dst, c2)
			dst.Close()
			stop()
			if err != nil || n != int64(len(want)) {
				t.Fatalf("receive: %d bytes, %v; want %d", n, err, len(want))
			}
			got, _ := os.ReadFile(filepath.Join(dir, "dst"))
			if !bytes.Equal(got, want) {
				t.Fatalf("limit %d: the copy differs", limit)
			}
		}
	})
}
