package poller

// SetAutoURing makes Auto try io_uring for every owner (on), or only for
// a Transient provider's (off); tests only.
func SetAutoURing(on bool) (restore func()) {
	old := autoURingAll
	autoURingAll = on
	return func() { autoURingAll = old }
}
