package httpd_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/galeio/gale/internal/testkit/backendtest"
)

func echoHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/hello", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "Hello, World!")
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		fmt.Fprintf(w, "%s %s %d:%s trailer=%v", r.Method, r.URL, len(b), b, r.Trailer)
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(strings.Repeat("x", 100000)))
	})
	return mux
}

func TestGetKeepAlive(t *testing.T) { backendtest.Run(t, testGetKeepAlive) }

func testGetKeepAlive(t *testing.T) {
	addr := start(t, nil, echoHandler())
	cl := client(t)
	for i := 0; i < 5; i++ {
		resp, err := cl.Get("http://" + addr + "/hello")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != "Hello, World!" || resp.StatusCode != 200 {
			t.Fatalf("got %d %q", resp.StatusCode, b)
		}
	}
}

func TestPostBodies(t *testing.T) { backendtest.Run(t, testPostBodies) }

func testPostBodies(t *testing.T) {
	addr := start(t, nil, echoHandler())
	cl := client(t)
	for _, n := range []int{0, 1, 100, 70000, 1 << 20} {
		body := strings.Repeat("a", n)
		resp, err := cl.Post("http://"+addr+"/echo", "text/plain", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		want := fmt.Sprintf("POST /echo %d:%s trailer=map[]", n, body)
		if string(b) != want {
			t.Fatalf("n=%d: got %.100q", n, b)
		}
		// chunked: a reader of unknown length
		resp, err = cl.Post("http://"+addr+"/echo", "text/plain", io.MultiReader(strings.NewReader(body)))
		if err != nil {
			t.Fatal(err)
		}
		b, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.HasPrefix(string(b), fmt.Sprintf("POST /echo %d:", n)) {
			t.Fatalf("chunked n=%d: got %.100q", n, b)
		}
	}
}

func TestBigResponse(t *testing.T) { backendtest.Run(t, testBigResponse) }

func testBigResponse(t *testing.T) {
	addr := start(t, nil, echoHandler())
	resp, err := client(t).Get("http://" + addr + "/big")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if len(b) != 100000 || resp.TransferEncoding == nil {
		t.Fatalf("got %d bytes, TE %v", len(b), resp.TransferEncoding)
	}
}

func TestPipelining(t *testing.T) { backendtest.Run(t, testPipelining) }

func testPipelining(t *testing.T) {
	addr := start(t, nil, echoHandler())
	c, br := rawConn(t, addr)
	req := "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n" +
		"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc" +
		"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nxyz\r\n0\r\nX-T: 1\r\n\r\n" +
		"GET /hello HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
	io.WriteString(c, req)
	want := []string{"Hello, World!", "POST /echo 3:abc trailer=map[]", "POST /echo 3:xyz trailer=map[X-T:[1]]", "Hello, World!"}
	for i, w := range want {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("response %d: %v", i, err)
		}
		b, _ := io.ReadAll(resp.Body)
		if string(b) != w {
			t.Fatalf("response %d: %q, want %q", i, b, w)
		}
	}
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("after Connection: close: %v, want EOF", err)
	}
}
