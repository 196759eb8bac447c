package metrics_test

import (
	"testing"

	"github.com/galeio/gale/internal/testkit/leaktest"
)

// TestMain fails the run if the tests leave goroutines or descriptors
// behind: every test stops what it starts, with t.Cleanup.
func TestMain(m *testing.M) { leaktest.Main(m) }
