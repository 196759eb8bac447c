package backendtest

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
)

// TempDir returns a new directory for t's files, removed when t ends, as
// t.TempDir does. On Windows it is removed file by file with os.Remove:
// under Wine 8, os.RemoveAll of Go 1.26 fails on every file ("unlinkat:
// Invalid function": Wine lacks the POSIX-semantics delete it asks for),
// and so does the cleanup of t.TempDir, which fails the test.
func TempDir(t testing.TB) string {
	t.Helper()
	if runtime.GOOS != "windows" {
		return t.TempDir()
	}
	dir, err := os.MkdirTemp("", "gale")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		var paths []string
		filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
			paths = append(paths, p)
			return nil
		})
		slices.Reverse(paths) // files before their directories
		for _, p := range paths {
			os.Remove(p)
		}
	})
	return dir
}
