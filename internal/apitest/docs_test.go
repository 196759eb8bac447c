package apitest_test

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// minExamples is how many Examples each public package shows in go doc.
const minExamples = 3

// TestPackageDocs fails on a public package whose documentation lacks a
// "# Limitations" section or has fewer than minExamples Examples; a
// package kept only under a former name (its doc says "Deprecated:")
// points to its successor's instead.
func TestPackageDocs(t *testing.T) {
	api := load(t)
	for _, rel := range public {
		d, err := packageDoc(filepath.Join(api.root, filepath.FromSlash(rel)))
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			continue
		}
		if strings.Contains(d.Doc, "\nDeprecated: ") {
			continue
		}
		if !strings.Contains(d.Doc, "\n# Limitations\n") {
			t.Errorf("package %s: its doc has no # Limitations section", rel)
		}
		if n := len(d.Examples) + examplesOfDecls(d); n < minExamples {
			t.Errorf("package %s: %d Examples, want at least %d", rel, n, minExamples)
		}
	}
}

// packageDoc parses dir's package and its tests (for the Examples).
func packageDoc(dir string) (*doc.Package, error) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var files []*ast.File
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	return doc.NewFromFiles(fset, files, "example.invalid/"+filepath.Base(dir))
}

// examplesOfDecls counts the Examples attached to d's types and functions.
func examplesOfDecls(d *doc.Package) int {
	n := 0
	funcs := func(fs []*doc.Func) {
		for _, f := range fs {
			n += len(f.Examples)
		}
	}
	funcs(d.Funcs)
	for _, ty := range d.Types {
		n += len(ty.Examples)
		funcs(ty.Funcs)
		funcs(ty.Methods)
	}
	return n
}
