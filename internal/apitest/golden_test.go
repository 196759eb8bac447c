package apitest_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite api/gale.txt from the current API")

// goldenFile is the golden API file, relative to the module root.
const goldenFile = "api/gale.txt"

// TestAPI compares the public API with the golden file.
func TestAPI(t *testing.T) {
	api := load(t)
	var got []string
	for _, e := range api.entries {
		got = append(got, e.line)
	}
	slices.Sort(got)
	path := filepath.Join(api.root, goldenFile)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(strings.Join(got, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./internal/apitest -update writes it)", err)
	}
	want := strings.Split(strings.TrimSpace(string(data)), "\n")
	slices.Sort(want)
	if d := diff(slices.Compact(want), got); d != "" {
		t.Errorf("the public API differs from %s (+ new, - gone); if the change is meant, "+
			"run go test ./internal/apitest -update and commit the file with the change:\n%s", goldenFile, d)
	}
}

// diff returns the lines of got not in want with +, and those of want not
// in got with -, in sorted order; both are sorted and free of repeats.
func diff(want, got []string) string {
	var b strings.Builder
	i, j := 0, 0
	for i < len(want) || j < len(got) {
		switch {
		case j == len(got) || i < len(want) && want[i] < got[j]:
			fmt.Fprintf(&b, "-%s\n", want[i])
			i++
		case i == len(want) || got[j] < want[i]:
			fmt.Fprintf(&b, "+%s\n", got[j])
			j++
		default:
			i, j = i+1, j+1
		}
	}
	return b.String()
}

func TestDiff(t *testing.T) {
	tests := []struct {
		want, got []string
		diff      string
	}{
		{nil, nil, ""},
		{[]string{"a", "b"}, []string{"a", "b"}, ""},
		{[]string{"a", "c"}, []string{"b", "c", "d"}, "-a\n+b\n+d\n"},
		{[]string{"a", "b", "c"}, []string{"b"}, "-a\n-c\n"},
	}
	for _, tc := range tests {
		if d := diff(tc.want, tc.got); d != tc.diff {
			t.Errorf("diff(%q, %q) = %q, want %q", tc.want, tc.got, d, tc.diff)
		}
	}
}
