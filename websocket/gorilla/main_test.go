package gorilla_test

import (
	"testing"

	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/leaktest"
)

// TestMain fails the run if the tests leave goroutines or descriptors
// behind.
func TestMain(m *testing.M) {
	backendtest.NetSockets()
	leaktest.Main(m)
}
