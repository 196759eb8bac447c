package httpd_test

import (
	"testing"

	"github.com/galeio/gale/internal/testkit/tooltest"
)

// needTool returns the path of name, skipping the test where it is
// missing (failing it under CI): see tooltest.Need.
func needTool(t *testing.T, name string) string {
	t.Helper()
	return tooltest.Need(t, name, "the server's client")
}
