package procfs

import (
	"testing"

	"github.com/galeio/gale/internal/testkit/leaktest"
)

func TestMain(m *testing.M) { leaktest.Main(m) }
