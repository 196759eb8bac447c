package engine_test

// Helpers of the fault tests (faults_*_test.go). Their clients check
// their echo (internal/testkit/faulttest, driven by
// internal/testkit/stresstest).

import (
	"github.com/galeio/gale/backend"
	"github.com/galeio/gale/engine"
)

// etBackend returns the backend e runs on.
func etBackend(e *engine.Engine) backend.Kind { return e.Stats().Total().Backend }
