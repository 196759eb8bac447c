package metrics

import "expvar"

// Var returns an expvar.Var whose value is a JSON object holding each
// source's Stats, read anew at each String call, by kind and name:
//
//	{"engine": {"ws": {"Loops": [...], ...}}, "http": {"api": {...}}, "websocket": {...}}
//
// Safe for concurrent use. It panics if two sources share a name.
func Var(srcs ...Source) expvar.Var {
	srcs = append([]Source(nil), srcs...)
	checkNames(srcs)
	return expvar.Func(func() any {
		out := make(map[string]map[string]any)
		for _, s := range srcs {
			k := out[s.kind()]
			if k == nil {
				k = make(map[string]any)
				out[s.kind()] = k
			}
			k[s.label()] = s.snapshot()
		}
		return out
	})
}

// Publish publishes Var(srcs...) with expvar under name: it shows in
// /debug/vars. As expvar.Publish does, it panics if name is taken.
func Publish(name string, srcs ...Source) { expvar.Publish(name, Var(srcs...)) }
