module github.com/galeio/gale/bench

go 1.26.0

require (
	github.com/brickingsoft/rio v1.6.15
	github.com/cloudwego/netpoll v0.7.2
	github.com/coder/websocket v1.8.15
	github.com/galeio/gale v0.0.0
	github.com/gorilla/websocket v1.5.3
	github.com/lesismal/llib v1.2.4
	github.com/lesismal/nbio v1.6.12
	github.com/lxzan/gws v1.10.2
	github.com/panjf2000/gnet/v2 v2.10.0
	github.com/tidwall/evio v1.0.8
	github.com/valyala/fasthttp v1.78.0
	github.com/xtaci/gaio v1.2.34
	golang.org/x/sys v0.49.0
	google.golang.org/grpc v1.85.0
)

require (
	cloud.google.com/go/compute/metadata v0.9.0 // indirect
	github.com/brickingsoft/bytebuffers v1.4.2 // indirect
	github.com/bytedance/gopkg v0.1.1 // indirect
	github.com/cloudwego/gopkg v0.1.4 // indirect
	github.com/cncf/xds/go v0.0.0-20260202195803-dba9d589def2 // indirect
	github.com/envoyproxy/protoc-gen-validate v1.3.3 // indirect
	github.com/kavu/go_reuseport v1.5.0 // indirect
	github.com/klauspost/compress v1.20.3 // indirect
	github.com/molecule-man/go-brrr v1.3.1 // indirect
	github.com/panjf2000/ants/v2 v2.12.1 // indirect
	github.com/valyala/bytebufferpool v1.0.0 // indirect
	go.uber.org/multierr v1.11.0 // indirect
	go.uber.org/zap v1.28.0 // indirect
	golang.org/x/crypto v0.58.0 // indirect
	golang.org/x/net v0.62.0 // indirect
	golang.org/x/oauth2 v0.36.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20260817212433-ac3dfec99bb1 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
	gopkg.in/natefinch/lumberjack.v2 v2.2.1 // indirect
)

replace github.com/galeio/gale => ../
