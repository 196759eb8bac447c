package poller

// SetAutoURing makes Auto try io_uring for every owner (on), or as
// autoKinds decides (off); tests only.
func SetAutoURing(on bool) (restore func()) {
	old := autoURingAll
	autoURingAll = on
	return func() { autoURingAll = old }
}

// SpillCap returns the capacity of the receive spill the io_uring
// backend keeps in tag's slot (live or not), or -1 for another backend;
// tests only.
func SpillCap(be Backend, tag Tag) int {
	b, ok := be.(*uringBackend)
	if !ok {
		return -1
	}
	if st := b.fds.at(int(tag.Slot())); st != nil && st.io != 0 {
		return cap(b.rec(st).spill)
	}
	return 0
}

// SpillMax is the spill's bound past which a multishot receive whose
// owner is not reading is stopped.
const SpillMax = spillMax

// ZeroCopyCounts returns the zero-copy sends the io_uring backend made and
// how many of them the kernel copied after all; zeros for another
// backend.
func ZeroCopyCounts(be Backend) (sends, copied int) {
	if b, ok := be.(*uringBackend); ok {
		return b.zcSends, b.zcCopied
	}
	return 0, 0
}

// StuckOrphans returns how many closed backends left memory to the
// kernel (see keepForever).
func StuckOrphans() int {
	stuck.Lock()
	defer stuck.Unlock()
	return len(stuck.orphans)
}

// OpenURingSized opens the io_uring backend with a submission queue of
// entries (a power of 2); tests only.
func OpenURingSized(p Provider, entries uint32) (Backend, error) {
	b, err := newURing(p, entries)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// Outstanding returns the io_uring backend's operations whose last
// completion is pending, the wake-up's read aside, and its orphan
// records; zeros for another backend.
func Outstanding(be Backend) (ops, orphans int) {
	b, ok := be.(*uringBackend)
	if !ok {
		return 0, 0
	}
	ops = b.inflight
	if b.wakeArm {
		ops--
	}
	return ops, len(b.orphans)
}

// RecvLimited reports whether the io_uring backend arms its multishot
// receives with a byte limit; false for another backend.
func RecvLimited(be Backend) bool {
	b, ok := be.(*uringBackend)
	return ok && b.mlim > 0
}

// NoRecvLimit makes the io_uring backend arm its multishot receives
// without a byte limit, as on kernels before Linux 6.17. Call it before
// the first receive.
func NoRecvLimit(be Backend) {
	if b, ok := be.(*uringBackend); ok {
		b.mlim = 0
	}
}
