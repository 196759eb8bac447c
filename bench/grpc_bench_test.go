package main

import (
	"context"
	"io"
	"os"
	"testing"
	"time"

	testgrpc "google.golang.org/grpc/interop/grpc_testing"
)

// init lets the test binary serve as grpc-bench's children (grpc-server,
// grpc-load), which it starts by running os.Executable with the
// subcommand.
func init() {
	if len(os.Args) > 1 && (os.Args[1] == "grpc-server" || os.Args[1] == "grpc-load") {
		subcommand(grpcCommands, os.Args[1:])
		os.Exit(0)
	}
}

// BenchmarkGRPCUnary measures unary calls (64 bytes each way) of grpc-go's
// client over one h2c connection, 8 goroutines per CPU, against each of
// grpcServers in this process: client and server share the CPUs, so
// ns/op is the cost of a call to both. grpc-bench measures the server
// alone, in a process of its own.
func BenchmarkGRPCUnary(b *testing.B) {
	const size = 64
	for _, s := range grpcServers {
		b.Run(s.name, func(b *testing.B) {
			tc := testgrpc.NewTestServiceClient(startGRPC(b, s, grpcH2C))
			req := grpcUnaryRequest(size)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := grpcUnary(ctx, tc, req); err != nil { // connects
				b.Fatal(err)
			}
			b.SetBytes(2 * size)
			b.ReportAllocs()
			b.SetParallelism(8)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := grpcUnary(ctx, tc, req); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
		})
	}
}

// TestGRPCBenchSmoke runs grpc-bench briefly on every server: its
// children (this test binary) start, calls complete, none fails, and the
// server's CPU time is read.
func TestGRPCBenchSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 3 server and 3 client processes")
	}
	o := grpcBenchOptions{servers: grpcNames(), reps: 1, maxBusy: 1,
		load: grpcLoadOptions{dur: 300 * time.Millisecond, warmup: 100 * time.Millisecond, conc: 4, conns: 2, size: 64}}
	runs, err := grpcBench(&o, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != len(grpcServers) {
		t.Errorf("%d runs, want %d", len(runs), len(grpcServers))
	}
	for _, r := range runs {
		if r.Err != "" || r.Calls <= 0 || r.Errors != 0 || r.redials() != 0 || r.ServerCPUSecs < 0 || r.P50us <= 0 {
			t.Errorf("%s", grpcRunLine(r))
		}
	}
}
