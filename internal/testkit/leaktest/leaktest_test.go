package leaktest

import (
	"os"
	"strings"
	"testing"
)

func TestNewFDs(t *testing.T) {
	before := map[int]string{3: "socket:[1]", 4: "pipe:[2]"}
	now := map[int]string{3: "socket:[1]", 4: "socket:[9]", 5: "anon_inode:[eventfd]"}
	got := NewFDs(before, now)
	if len(got) != 2 || got[4] != "socket:[9]" || got[5] != "anon_inode:[eventfd]" {
		t.Errorf("NewFDs = %v, want fd 4 (reused for another file) and fd 5", got)
	}
	if d := Describe(got); !strings.Contains(d, "fd 4 -> socket:[9]") || !strings.Contains(d, "fd 5 -> anon_inode:[eventfd]") {
		t.Errorf("Describe = %q, want both descriptors listed", d)
	}
}

func TestOpenFDsSeesANewFile(t *testing.T) {
	before, ok := OpenFDs()
	if !ok {
		t.Skip("OpenFDs lists nothing here: no /proc/self/fd, or Windows handles")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	now, _ := OpenFDs()
	r.Close()
	w.Close()
	if added := NewFDs(before, now); len(added) != 2 {
		t.Errorf("NewFDs after os.Pipe = %v, want the pipe's 2 descriptors", added)
	}
}
