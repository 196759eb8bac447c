package soak

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
)

// TestPlanMix draws many plans and checks the mix against plan.go's
// figures: the ranges, the log-uniform sizes, the shares of each ending,
// and that a seed gives the same plans again.
func TestPlanMix(t *testing.T) {
	const n = 20000
	r := rand.New(rand.NewPCG(42, 0))
	var none, small, msgs, paused int
	endings := map[ending]int{}
	minSize, maxSize := math.MaxInt, 0
	for range n {
		p := newPlan(r)
		endings[p.end]++
		if len(p.msgs) == 0 {
			none++
		}
		if len(p.msgs) > maxMessages {
			t.Fatalf("plan with %d messages, want at most %d", len(p.msgs), maxMessages)
		}
		if p.end == endReset && (p.resetAt < 0 || p.resetAt > p.total()) {
			t.Fatalf("plan %v resets outside its stream", p)
		}
		for _, m := range p.msgs {
			msgs++
			minSize, maxSize = min(minSize, m.size), max(maxSize, m.size)
			if m.size <= 1024 {
				small++
			}
			if m.pause != 0 {
				paused++
				if m.pause < minPause || m.pause > maxPause {
					t.Fatalf("pause %v outside [%v, %v]", m.pause, minPause, maxPause)
				}
			}
		}
	}
	if minSize != 1 || maxSize > maxMessage || maxSize < maxMessage/2 {
		t.Errorf("message sizes span %d to %d, want 1 to nearly %d", minSize, maxSize, maxMessage)
	}
	near := func(what string, got, want float64) {
		if math.Abs(got-want) > 0.03 {
			t.Errorf("%s: %.3f, want %.3f ± 0.03", what, got, want)
		}
	}
	near("messages of at most 1 KiB (half the log range)", float64(small)/float64(msgs), 0.5)
	near("plans with no message", float64(none)/n, pNoMessage)
	near("messages followed by a pause", float64(paused)/float64(msgs), pPause)
	near("resets", float64(endings[endReset])/n, pReset)
	near("half-closes", float64(endings[endHalfClose])/n, pHalfClose)
	near("closes", float64(endings[endClose])/n, 1-pReset-pHalfClose)

	a, b := rand.New(rand.NewPCG(9, 9)), rand.New(rand.NewPCG(9, 9))
	for range 100 {
		if pa, pb := newPlan(a), newPlan(b); !reflect.DeepEqual(pa, pb) {
			t.Fatalf("same seed, different plans: %v and %v", pa, pb)
		}
	}
}
