package loop

import "github.com/galeio/gale/internal/poller"

// Backend names the kernel interface of a loop: backend.Kind, the type
// the public packages take.
type Backend = poller.Kind

// The backends. Auto is decided from what the Provider says of its owner's
// work (Transient, HandOff, Offload; poller's autoKinds); GALE_BACKEND
// overrides the choice.
const (
	Auto    = poller.Auto
	Epoll   = poller.Epoll
	IOURing = poller.IOURing
	Kqueue  = poller.Kqueue
	Net     = poller.Net
)

// Traits are what a backend does beyond the contract (poller.Traits).
type Traits = poller.Traits

// The traits owners adapt to.
const (
	ReadsAhead  = poller.ReadsAhead
	DefersSends = poller.DefersSends
)

// Offloader is implemented by what runs on a loop and hands its users'
// code to other goroutines (httpd's handler, for engine); the Provider
// then says so to Auto through poller.Offload.
type Offloader interface {
	Offloads() bool
}

// Opener opens a loop's backend; tests set Config.Open to one that
// injects faults.
type Opener = func(Provider) (poller.Backend, error)

// open opens the backend cfg asks for.
func open(cfg *Config) (poller.Backend, error) {
	if cfg.Open != nil {
		return cfg.Open(cfg.Provider)
	}
	be, err := poller.OpenKind(cfg.Backend, cfg.Provider)
	if err != nil {
		return nil, err
	}
	if zc, ok := be.(poller.ZeroCopier); ok && cfg.ZeroCopy > 0 {
		zc.SetZeroCopy(cfg.ZeroCopy)
	}
	return be, nil
}
