package procfs

import (
	"testing"

	"github.com/galeio/gale/internal/leaktest"
)

func TestMain(m *testing.M) { leaktest.Main(m) }
