package websocket

import (
	"bytes"
	"testing"
)

func TestWindow(t *testing.T) {
	// seq returns n bytes counting up from b.
	seq := func(b byte, n int) []byte {
		p := make([]byte, n)
		for i := range p {
			p[i] = b + byte(i)
		}
		return p
	}
	tests := []struct {
		name string
		bits uint8
		adds [][]byte
		want []byte
	}{
		{"empty", 8, nil, nil},
		{"one add", 8, [][]byte{[]byte("abc")}, []byte("abc")},
		{"empty adds", 8, [][]byte{nil, []byte("ab"), {}, []byte("c")}, []byte("abc")},
		{"exactly full", 8, [][]byte{seq(0, 200), seq(200, 56)}, seq(0, 256)},
		{"slides", 8, [][]byte{seq(0, 200), seq(200, 100)}, seq(44, 256)},
		{"one add larger", 8, [][]byte{[]byte("x"), seq(0, 300)}, seq(44, 256)},
		{"many small", 8, [][]byte{seq(0, 100), seq(100, 100), seq(200, 100), seq(44, 1)}, append(seq(45, 255), 44)},
		{"bits clamped up", 3, [][]byte{seq(0, 300)}, seq(44, 256)},
		{"bits 9", 9, [][]byte{seq(0, 255), seq(255, 255), seq(254, 255)}, bytes.Join([][]byte{seq(253, 2), seq(255, 255), seq(254, 255)}, nil)},
	}
	for _, tt := range tests {
		w := newWindow(tt.bits)
		for _, p := range tt.adds {
			w.add(p)
			if len(w.bytes()) > w.n || cap(w.buf) > w.n {
				t.Errorf("%s: after add(%d bytes): len %d, cap %d, want both ≤ %d", tt.name, len(p), len(w.bytes()), cap(w.buf), w.n)
			}
		}
		if got := w.bytes(); !bytes.Equal(got, tt.want) {
			t.Errorf("%s: bytes() = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestWindowSize(t *testing.T) {
	tests := []struct {
		bits uint8
		want int
	}{{0, 256}, {8, 256}, {9, 512}, {12, 4096}, {15, 32768}, {16, 32768}, {255, 32768}}
	for _, tt := range tests {
		if got := newWindow(tt.bits).n; got != tt.want {
			t.Errorf("newWindow(%d).n = %d, want %d", tt.bits, got, tt.want)
		}
	}
}
