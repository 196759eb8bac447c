package poller

// Open returns the backend Auto picks here: OpenKind(Auto, p).
func Open(p Provider) (Backend, error) { return OpenKind(Auto, p) }

// OpenKind returns the backend k names, after the GALE_BACKEND override
// (Choose). Auto opens the first of autoKinds(p) that opens here. IOURing
// fails, with an error wrapping ErrUnavailable, where io_uring cannot be
// used; a backend this platform lacks fails with an error wrapping
// errors.ErrUnsupported.
func OpenKind(k Kind, p Provider) (Backend, error) {
	k, err := Choose(k)
	if err != nil {
		return nil, err
	}
	if k != Auto {
		return openKind(k, p)
	}
	var be Backend
	for _, k := range autoKinds(p) {
		if be, err = openKind(k, p); err == nil {
			return be, nil
		}
	}
	return nil, err
}
