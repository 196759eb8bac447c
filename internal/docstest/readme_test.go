package docstest

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// root is the module's root, from this package's directory.
const root = "../.."

func read(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The release README.md names as the least a user needs is go.mod's: a
// module on an older Go cannot build against gale.
func TestREADMEGoVersion(t *testing.T) {
	m := regexp.MustCompile(`(?m)^go (1\.\d+)(\.\d+)?$`).FindStringSubmatch(read(t, "go.mod"))
	if m == nil {
		t.Fatal("go.mod has no go directive")
	}
	want := m[1]
	asks := regexp.MustCompile(`Go (1\.\d+)(\.\d+)? or newer`).FindAllStringSubmatch(read(t, "README.md"), -1)
	if len(asks) == 0 {
		t.Fatal(`README.md says nowhere which Go it needs ("Go 1.N or newer")`)
	}
	for _, a := range asks {
		if a[1] != want {
			t.Errorf("README.md asks for %q, go.mod requires Go %s", a[0], want)
		}
	}
}
