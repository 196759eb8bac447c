package main

import (
	"cmp"
	"context"
	"errors"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/interop"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"
)

// grpcTimeout bounds each interop case and each wait of these tests.
const grpcTimeout = 10 * time.Second

// grpcCases are grpc-go's interop cases (package interop, after
// github.com/grpc/grpc's doc/interop-test-descriptions.md) that a server
// reached by address, without credentials beyond TLS, can run. Left out:
// the cases of Google's credentials (ComputeEngineCreds, JWTTokenCreds
// and the like), which need Google's servers; PickFirstUnary and the ORCA
// cases, which need a load-balancing setup; and the soak cases, which are
// long runs of the unary one.
var grpcCases = []struct {
	name string
	run  func(ctx context.Context, cc *grpc.ClientConn, tc testgrpc.TestServiceClient)
}{
	{"EmptyUnary", func(ctx context.Context, _ *grpc.ClientConn, tc testgrpc.TestServiceClient) {
		interop.DoEmptyUnaryCall(ctx, tc)
	}},
	{"LargeUnary", func(ctx context.Context, _ *grpc.ClientConn, tc testgrpc.TestServiceClient) {
		interop.DoLargeUnaryCall(ctx, tc)
	}},
	{"ClientStreaming", func(ctx context.Context, _ *grpc.ClientConn, tc testgrpc.TestServiceClient) {
		interop.DoClientStreaming(ctx, tc)
	}},
	{"ServerStreaming", func(ctx context.Context, _ *grpc.ClientConn, tc testgrpc.TestServiceClient) {
		interop.DoServerStreaming(ctx, tc)
	}},
	{"PingPong", func(ctx context.Context, _ *grpc.ClientConn, tc testgrpc.TestServiceClient) {
		interop.DoPingPong(ctx, tc)
	}},
	{"EmptyStream", func(ctx context.Context, _ *grpc.ClientConn, tc testgrpc.TestServiceClient) {
		interop.DoEmptyStream(ctx, tc)
	}},
	{"TimeoutOnSleepingServer", func(ctx context.Context, _ *grpc.ClientConn, tc testgrpc.TestServiceClient) {
		interop.DoTimeoutOnSleepingServer(ctx, tc)
	}},
	{"CancelAfterBegin", func(ctx context.Context, _ *grpc.ClientConn, tc testgrpc.TestServiceClient) {
		interop.DoCancelAfterBegin(ctx, tc)
	}},
	{"CancelAfterFirstResponse", func(ctx context.Context, _ *grpc.ClientConn, tc testgrpc.TestServiceClient) {
		interop.DoCancelAfterFirstResponse(ctx, tc)
	}},
	{"CustomMetadata", func(ctx context.Context, _ *grpc.ClientConn, tc testgrpc.TestServiceClient) {
		interop.DoCustomMetadata(ctx, tc)
	}},
	{"StatusCodeAndMessage", func(ctx context.Context, _ *grpc.ClientConn, tc testgrpc.TestServiceClient) {
		interop.DoStatusCodeAndMessage(ctx, tc)
	}},
	{"SpecialStatusMessage", func(ctx context.Context, _ *grpc.ClientConn, tc testgrpc.TestServiceClient) {
		interop.DoSpecialStatusMessage(ctx, tc)
	}},
	{"UnimplementedMethod", func(ctx context.Context, cc *grpc.ClientConn, _ testgrpc.TestServiceClient) {
		interop.DoUnimplementedMethod(ctx, cc)
	}},
	{"UnimplementedService", func(ctx context.Context, cc *grpc.ClientConn, _ testgrpc.TestServiceClient) {
		interop.DoUnimplementedService(ctx, testgrpc.NewUnimplementedServiceClient(cc))
	}},
}

// TestGRPCInterop runs grpc-go's interop cases with its client against
// grpc-go's server served by gale's httpd (ServeHTTP as the Handler), by
// net/http (the same Handler: the oracle) and by grpc-go itself, each as
// h2c with prior knowledge and over TLS with h2 by ALPN. The cases share
// one connection per server, as a client would.
func TestGRPCInterop(t *testing.T) {
	for _, s := range grpcServers {
		for _, tr := range grpcTransports {
			t.Run(s.name+"/"+tr.name, func(t *testing.T) {
				cc := startGRPC(t, s, tr)
				tc := testgrpc.NewTestServiceClient(cc)
				for _, c := range grpcCases {
					t.Run(c.name, func(t *testing.T) {
						ctx, cancel := context.WithTimeout(context.Background(), grpcTimeout)
						defer cancel()
						grpcCheck(t, func() { c.run(ctx, cc, tc) })
					})
				}
			})
		}
	}
}

// probeKey, in a FullDuplexCall's metadata, has grpcProbe take the call.
const probeKey = "x-gale-probe"

// errNotEnded is what grpcProbe reports of a context that did not end.
var errNotEnded = errors.New("the context did not end in grpcTimeout")

// grpcProbe is a stream interceptor that takes a FullDuplexCall whose
// metadata holds probeKey from the service: it sends the response's
// header, waits for the call's context to end (at most grpcTimeout) and
// sends the context's error on ended (errNotEnded if it did not end).
func grpcProbe(ended chan<- error) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
		md, _ := metadata.FromIncomingContext(ss.Context())
		if len(md.Get(probeKey)) == 0 {
			return h(srv, ss)
		}
		if err := ss.SendHeader(metadata.Pairs(probeKey, "waiting")); err != nil {
			ended <- err
			return err
		}
		select {
		case <-ss.Context().Done():
			ended <- ss.Context().Err()
		case <-time.After(grpcTimeout):
			ended <- errNotEnded
		}
		return ss.Context().Err()
	}
}

// TestGRPCCancelReachesHandler checks that a call the client abandons,
// by cancelling it (RST_STREAM with CANCEL) or by its deadline, ends the
// context of the server's handler while the handler waits on nothing
// else: the request's body stays open, so only the RST_STREAM (or the
// deadline the grpc-timeout header gave) can end it.
func TestGRPCCancelReachesHandler(t *testing.T) {
	ends := []struct {
		name    string
		timeout time.Duration // the call's deadline; 0: cancelled once the handler runs
		want    []error       // what the handler's context may end with
	}{
		{"cancel", 0, []error{context.Canceled}},
		// The client's deadline sends RST_STREAM, and the server's own
		// timer, from grpc-timeout, fires too: either may come first.
		{"deadline", 300 * time.Millisecond, []error{context.Canceled, context.DeadlineExceeded}},
	}
	for _, s := range grpcServers {
		for _, tr := range grpcTransports {
			for _, e := range ends {
				t.Run(s.name+"/"+tr.name+"/"+e.name, func(t *testing.T) {
					if err := abandonCall(t, s, tr, e.timeout); !errorsIsAny(err, e.want) {
						t.Errorf("the handler's context ended with %v, want one of %v", err, e.want)
					}
				})
			}
		}
	}
}

// abandonCall starts s as tr says, with grpcProbe, makes a call to the
// probe and, once its handler runs, cancels it, or lets its deadline
// pass when timeout is not 0; it returns the error that the handler's
// context ended with.
func abandonCall(t *testing.T, s grpcServer, tr grpcTransport, timeout time.Duration) error {
	ended := make(chan error, 1)
	cc := startGRPC(t, s, tr, grpc.StreamInterceptor(grpcProbe(ended)))
	tc := testgrpc.NewTestServiceClient(cc)
	// A call first, so that the deadline does not run out in the dial
	// and the TLS handshake.
	warm, cancelWarm := context.WithTimeout(context.Background(), grpcTimeout)
	defer cancelWarm()
	grpcCheck(t, func() { interop.DoEmptyUnaryCall(warm, tc) })

	ctx, cancel := context.WithTimeout(context.Background(), cmp.Or(timeout, grpcTimeout))
	defer cancel()
	stream, err := tc.FullDuplexCall(metadata.AppendToOutgoingContext(ctx, probeKey, "1"))
	if err != nil {
		t.Fatalf("FullDuplexCall: %v", err)
	}
	// The header says the handler runs.
	if md, err := stream.Header(); err != nil || len(md.Get(probeKey)) == 0 {
		t.Fatalf("Header() = %v, %v; want the probe's", md, err)
	}
	if timeout == 0 {
		cancel()
	}
	select {
	case err := <-ended:
		return err
	case <-time.After(2 * grpcTimeout):
		t.Fatal("the probe did not report")
		return nil
	}
}

// errorsIsAny reports whether err matches one of targets.
func errorsIsAny(err error, targets []error) bool {
	for _, target := range targets {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}
