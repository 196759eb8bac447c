package loop

// SetWakeHook makes f run in every wake-up between the decision to wake
// the loop and the wake-up itself, until restore is called.
func SetWakeHook(f func()) (restore func()) {
	old := testHookWake
	testHookWake = f
	return func() { testHookWake = old }
}

// Sleeping reports whether l is in, or about to enter, its wait.
func (l *Loop) Sleeping() bool { return l.sleeping.Load() }

// YieldEvery is how often a busy loop passes through the scheduler.
const YieldEvery = yieldEvery

// SetYieldHook makes f run on the loop goroutine at every yield to the
// scheduler, until restore is called. Set it while no loop runs.
func SetYieldHook(f func()) (restore func()) {
	old := testHookYield
	testHookYield = f
	return func() { testHookYield = old }
}
