package engine

import "testing"

// pbData is a handler whose OnData consumes what it is given, as a
// protocol's does in the common case.
type pbData struct{ BaseHandler }

func (pbData) OnData(_ *Conn, in *Inbound) Action {
	in.Discard(in.Len())
	return None
}

// BenchmarkCallbackDispatch measures what containing a callback's panic
// costs per call, on one goroutine as on the loop: OnData called through
// the Handler interface as before (direct), through callData with its
// deferred recover (contained, the default), and with
// Options.CrashOnPanic (crash: the defer runs, recover is not called).
func BenchmarkCallbackDispatch(b *testing.B) {
	for _, bc := range []struct {
		name  string
		crash bool
		call  func(c *Conn, in *Inbound) Action
	}{
		{"direct", false, func(c *Conn, in *Inbound) Action { return c.lp.e.handler.OnData(c, in) }},
		{"contained", false, (*Conn).callData},
		{"crash", true, (*Conn).callData},
	} {
		b.Run(bc.name, func(b *testing.B) {
			e := &Engine{handler: pbData{}}
			e.opts.CrashOnPanic = bc.crash
			c := &Conn{lp: &eloop{e: e}}
			in := &Inbound{}
			b.ReportAllocs()
			for b.Loop() {
				if bc.call(c, in) != None {
					b.Fatal("OnData's action is not None")
				}
			}
		})
	}
}
