//go:build unix

package sock_test

import (
	"testing"

	"github.com/galeio/gale/internal/testkit/leaktest"
)

// TestMain fails the run if the tests leak goroutines or descriptors.
func TestMain(m *testing.M) { leaktest.Main(m) }
