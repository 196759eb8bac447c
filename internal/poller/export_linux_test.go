package poller

// SetAutoURing turns Auto's preference for io_uring on or off; tests only.
func SetAutoURing(on bool) (restore func()) {
	old := autoURing
	autoURing = on
	return func() { autoURing = old }
}
