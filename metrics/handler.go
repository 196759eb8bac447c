package metrics

import "net/http"

// Handler returns an http.Handler that answers every request with the
// counters of srcs in the Prometheus text exposition format (version
// 0.0.4). Each request reads every source once. The handler is safe for
// concurrent use. It panics if two sources share a name.
func Handler(srcs ...Source) http.Handler {
	srcs = append([]Source(nil), srcs...)
	checkNames(srcs)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fs := gather(srcs)
		w.Header().Set("Content-Type", contentType)
		fs.writeTo(w) // a failed write is the client's going: nothing to tell it
	})
}
