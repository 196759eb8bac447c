package poller

// SetAutoURing turns Auto's preference for io_uring on or off; tests only.
func SetAutoURing(on bool) (restore func()) {
	old := autoURing
	autoURing = on
	return func() { autoURing = old }
}

// SpillCap returns the capacity of the receive spill the io_uring
// backend keeps in tag's slot (live or not), or -1 for another backend;
// tests only.
func SpillCap(be Backend, tag Tag) int {
	b, ok := be.(*uringBackend)
	if !ok {
		return -1
	}
	if st := b.fds.at(int(tag.Slot())); st != nil {
		return cap(st.spill)
	}
	return 0
}

// SpillMax is the spill's bound past which a multishot receive whose
// owner is not reading is stopped.
const SpillMax = spillMax
