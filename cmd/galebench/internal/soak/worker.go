package soak

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"
)

// target is a server under load: where to dial and what to count in.
type target struct {
	name string
	addr string
	t    *tally
}

// redialPause is how long a worker waits after a failed dial, so that a
// server that is gone is not dialed in a tight loop.
const redialPause = 100 * time.Millisecond

// load runs conns workers per target until ctx ends, and returns once
// every connection has ended. Each worker plays one connection at a time,
// plan after plan, drawn from its own PRNG, seeded from seed, the round
// (warm-up 0, the load 1) and the worker's place: a run is reproducible
// plan by plan, though not in timing.
func load(ctx context.Context, targets []target, conns int, seed uint64, round int, stall time.Duration) {
	var wg sync.WaitGroup
	for ti, tg := range targets {
		for w := range conns {
			r := rand.New(rand.NewPCG(seed, uint64(round)<<32|uint64(ti)<<16|uint64(w)))
			wg.Go(func() { work(ctx, tg, r, stall) })
		}
	}
	wg.Wait()
}

// work is one worker's loop.
func work(ctx context.Context, tg target, r *rand.Rand, stall time.Duration) {
	for ctx.Err() == nil {
		if !runSession(ctx, tg.addr, newPlan(r), tg.t, stall) {
			sleep(ctx, redialPause)
		}
	}
}
