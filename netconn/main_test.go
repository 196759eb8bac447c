package netconn_test

import (
	"testing"

	"github.com/galeio/gale/internal/testkit/leaktest"
)

// TestMain fails the run if the tests leave goroutines or descriptors
// behind; the loops of a group stop a linger after their last user.
func TestMain(m *testing.M) { leaktest.Main(m) }
