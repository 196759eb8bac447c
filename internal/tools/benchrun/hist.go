package benchrun

import (
	"math"
	"time"
)

// histogram counts latencies in logarithmic buckets of about 3 % width,
// from 1 µs to about 1 minute. One goroutine adds to it; merge combines
// them afterwards.
type histogram struct {
	counts []int64
	n      int64
}

const histBase = 1.03

func newHistogram() *histogram { return &histogram{counts: make([]int64, 640)} }

func (h *histogram) add(d time.Duration) {
	us := max(float64(d)/float64(time.Microsecond), 1)
	i := min(int(math.Log(us)/math.Log(histBase)), len(h.counts)-1)
	h.counts[i]++
	h.n++
}

func (h *histogram) merge(o *histogram) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.n += o.n
}

// quantile returns the upper edge of the bucket holding quantile q, in µs.
func (h *histogram) quantile(q float64) float64 {
	want := int64(math.Ceil(q * float64(h.n)))
	var seen int64
	for i, c := range h.counts {
		seen += c
		if seen >= want && c > 0 {
			return math.Pow(histBase, float64(i+1))
		}
	}
	return 0
}
