package httpd_test

import (
	"flag"
	"testing"
	"time"
)

// fuzzPace is the differential test's pace for the fuzz target: shorter
// waits, for more inputs a second. A difference not in knownDiffs is run
// again at slowPaces before it counts.
var fuzzPace = diffPace{quiet: 25 * time.Millisecond, linger: 250 * time.Millisecond, bound: 10 * time.Second}

// maxFuzzInput bounds the inputs the fuzz target sends: the 431 cases of
// the corpus are left to TestDifferential.
const maxFuzzInput = 64 << 10

// FuzzDifferential is TestDifferential with any bytes: in goes to
// net/http's server and to gale's (both started once per process and
// kept across inputs), the client half-closing right after it when shut
// is set, and any difference knownDiffs does not explain fails. Its seeds
// are the files in testdata/fuzz/FuzzDifferential and, when fuzzing, the
// corpus.
//
//	go test -run XXX -fuzz FuzzDifferential -fuzztime 3m ./httpd
func FuzzDifferential(f *testing.F) {
	// The corpus seeds only a fuzzing run: go test runs it already, in
	// TestDifferential, and far faster (in parallel).
	if fl := flag.Lookup("test.fuzz"); fl != nil && fl.Value.String() != "" {
		for _, tc := range diffCorpus {
			if len(tc.in) <= maxFuzzInput {
				f.Add([]byte(tc.in), tc.shut)
			}
		}
	}
	s := startDiffServers(f)
	f.Fuzz(func(t *testing.T, in []byte, shut bool) {
		if len(in) > maxFuzzInput {
			t.Skip("too long for the fuzz target")
		}
		o, err := s.run(in, shut, "", fuzzPace)
		if err != nil {
			t.Fatal(err)
		}
		judge(t, o)
	})
}
