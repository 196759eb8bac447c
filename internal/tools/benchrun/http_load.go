package benchrun

import (
	"fmt"
	"time"
)

// httpPaths are the paths each HTTP load scenario asks for.
var httpPaths = map[string]string{
	"http-hello":  HelloPath,
	"http-64k":    BulkPath,
	"http-upload": UploadPath,
}

// uploadScript is http-upload's wrk script: every request a POST of
// httpUploadSize bytes. wrk formats the request once per thread, at its
// start, from wrk.method, wrk.body and wrk.headers (adding the
// Content-Length), so the script costs nothing per request.
var uploadScript = fmt.Sprintf(`wrk.method = "POST"
wrk.body = string.rep("x", %d)
wrk.headers["Content-Type"] = "application/octet-stream"
`, httpUploadSize)

// httpLoad drives an HTTP server with wrk for o.Duration (rounded up to
// whole seconds) over c.Conns keep-alive connections, each sending its
// next request once the last is answered: GETs of HelloPath (http-hello)
// or BulkPath (http-64k), or POSTs to UploadPath (http-upload). The
// figure is wrk's requests per second, or for the bulk cases the body
// bytes they carried per second; the latency is wrk's, the client CPU
// wrk's. checkHTTP has checked the answers before.
func httpLoad(ch *Child, c Case, o Options) (result, error) {
	job := wrkJob{url: "http://" + ch.Addr() + httpPaths[c.Scenario], conns: c.Conns, d: o.Duration}
	if c.Scenario == "http-upload" {
		job.script = uploadScript
	}
	w, err := job.run()
	if err != nil {
		return result{}, err
	}
	r := result{
		msgs:      w.requests,
		bytes:     w.requests * int64(c.Size),
		elapsed:   time.Duration(float64(w.requests) / w.rps * float64(time.Second)),
		clientCPU: w.cpu,
		p50:       w.p50,
		p99:       w.p99,
		value:     w.rps,
	}
	if c.Unit() == "MB/s" {
		r.value = w.rps * float64(c.Size) / 1e6
	}
	return r, nil
}
