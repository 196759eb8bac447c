package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/stats"

	"github.com/galeio/gale/internal/tools/procfs"
)

// grpcLoadResult is what grpc-load reports of its measured window, as a
// JSON line.
type grpcLoadResult struct {
	Calls      int64  `json:"calls"`
	Errors     int64  `json:"errors,omitempty"` // failed calls and wrong answers, in the window
	FirstError string `json:"first_error,omitempty"`
	// Dials counts the connections the client opened, warm-up included:
	// more than -conns when the server closed one (a GOAWAY) and the
	// client dialed again, which grpc-go does without failing the calls
	// the server had not taken.
	Dials   int64   `json:"dials"`
	Secs    float64 `json:"secs"`
	CPUSecs float64 `json:"client_cpu_secs"` // the load process's
	P50us   float64 `json:"p50_us"`
	P99us   float64 `json:"p99_us"`
}

// grpcLoadOptions are grpc-load's flags, which grpc-bench passes on.
type grpcLoadOptions struct {
	addr   string
	dur    time.Duration
	warmup time.Duration
	conc   int // calls in flight
	conns  int
	size   int // request and response payload, bytes
}

func (o *grpcLoadOptions) flags(fs *flag.FlagSet) {
	fs.DurationVar(&o.dur, "d", 5*time.Second, "measured duration")
	fs.DurationVar(&o.warmup, "warmup", time.Second, "calls before the measurement")
	fs.IntVar(&o.conc, "c", 32, "calls in flight (a goroutine each)")
	fs.IntVar(&o.conns, "conns", 1, "client connections; the goroutines take them in turn")
	fs.IntVar(&o.size, "size", 64, "the payload of each request and of each response, bytes")
}

// args are the flags for a grpc-load child.
func (o *grpcLoadOptions) args() []string {
	return []string{"-addr", o.addr, "-d", o.dur.String(), "-warmup", o.warmup.String(),
		"-c", fmt.Sprint(o.conc), "-conns", fmt.Sprint(o.conns), "-size", fmt.Sprint(o.size)}
}

// grpcLoadMain is the grpc-load subcommand: grpc-go's client making
// UnaryCall as fast as its answers come, on -c goroutines over -conns
// connections to -addr (h2c). After -warmup it prints "start", after -d
// more "end", then its grpcLoadResult.
func grpcLoadMain(args []string) error {
	fs := flag.NewFlagSet("grpc-load", flag.ExitOnError)
	var o grpcLoadOptions
	fs.StringVar(&o.addr, "addr", "", "the server's address (loopback)")
	o.flags(fs)
	fs.Parse(args)
	if err := loopbackOnly(o.addr); err != nil {
		return err
	}
	var ccs []*grpc.ClientConn
	defer func() {
		for _, cc := range ccs {
			cc.Close()
		}
	}()
	var dials connCounter
	for range max(o.conns, 1) {
		cc, err := dialGRPC(o.addr, nil, grpc.WithStatsHandler(&dials))
		if err != nil {
			return err
		}
		ccs = append(ccs, cc)
	}
	res := grpcLoad(&o, ccs, func(s string) { fmt.Println(s) })
	res.Dials = dials.n.Load()
	b, err := json.Marshal(res)
	if err != nil {
		return err
	}
	fmt.Println(string(b))
	return nil
}

// grpcUnaryRequest is the request of every call: size bytes each way.
func grpcUnaryRequest(size int) *testgrpc.SimpleRequest {
	return &testgrpc.SimpleRequest{
		ResponseType: testgrpc.PayloadType_COMPRESSABLE,
		ResponseSize: int32(size),
		Payload:      &testgrpc.Payload{Body: make([]byte, size)},
	}
}

// grpcUnary makes one call of req, and checks the answer's size.
func grpcUnary(ctx context.Context, tc testgrpc.TestServiceClient, req *testgrpc.SimpleRequest) error {
	res, err := tc.UnaryCall(ctx, req)
	if err != nil {
		return err
	}
	if n := len(res.GetPayload().GetBody()); n != int(req.ResponseSize) {
		return fmt.Errorf("an answer of %d bytes, want %d", n, req.ResponseSize)
	}
	return nil
}

// grpcLoad runs the calls: o.warmup, then o.dur measured; it calls say
// with "start" and "end" as the window opens and closes.
func grpcLoad(o *grpcLoadOptions, ccs []*grpc.ClientConn, say func(string)) grpcLoadResult {
	var (
		measuring, stop atomic.Bool
		calls, errs     atomic.Int64
		mu              sync.Mutex
		firstErr        error
		lat             []time.Duration
		wg              sync.WaitGroup
	)
	for i := range o.conc {
		tc := testgrpc.NewTestServiceClient(ccs[i%len(ccs)])
		wg.Go(func() {
			req := grpcUnaryRequest(o.size)
			var mine []time.Duration
			for !stop.Load() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				t0 := time.Now()
				err := grpcUnary(ctx, tc, req)
				d := time.Since(t0)
				cancel()
				if !measuring.Load() {
					continue
				}
				if err != nil {
					errs.Add(1)
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					continue
				}
				calls.Add(1)
				mine = append(mine, d)
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		})
	}
	time.Sleep(o.warmup)
	cpu0, t0 := procfs.SelfCPU(), time.Now()
	measuring.Store(true)
	say("start")
	time.Sleep(o.dur)
	measuring.Store(false)
	n, nerr, secs, cpu := calls.Load(), errs.Load(), time.Since(t0).Seconds(), procfs.SelfCPU()-cpu0
	say("end")
	stop.Store(true)
	wg.Wait()
	res := grpcLoadResult{Calls: n, Errors: nerr, Secs: secs, CPUSecs: cpu.Seconds()}
	if firstErr != nil {
		res.FirstError = firstErr.Error()
	}
	slices.Sort(lat)
	res.P50us, res.P99us = percentileUs(lat, 0.50), percentileUs(lat, 0.99)
	return res
}

// percentileUs is the p-quantile of sorted durations, in microseconds.
func percentileUs(sorted []time.Duration, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := min(int(p*float64(len(sorted))), len(sorted)-1)
	return float64(sorted[i].Nanoseconds()) / 1e3
}

// connCounter is a grpc-go stats.Handler that counts the connections
// opened.
type connCounter struct{ n atomic.Int64 }

func (c *connCounter) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context   { return ctx }
func (c *connCounter) HandleRPC(context.Context, stats.RPCStats)                         {}
func (c *connCounter) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }

func (c *connCounter) HandleConn(_ context.Context, s stats.ConnStats) {
	if _, ok := s.(*stats.ConnBegin); ok {
		c.n.Add(1)
	}
}
