package benchrun

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// httpTimeout bounds each of the checks' requests and an idle
// connection's GET.
const httpTimeout = 10 * time.Second

// checkHTTP checks, before an HTTP server is measured, that it answers
// what the scenarios ask as HTTPHandler does: wrk counts answers and
// their status but reads no body. It makes two GETs of HelloPath on one
// connection (so that keep-alive, which wrk relies on and does not
// report, is honored), then one GET of BulkPath and one POST of
// httpUploadSize bytes to UploadPath with net/http's client, each on a
// connection of its own that is closed afterwards.
func checkHTTP(addr string) error {
	c, err := net.DialTimeout("tcp", addr, httpTimeout)
	if err != nil {
		return fmt.Errorf("HTTP check: %w", err)
	}
	defer c.Close()
	for i := range 2 {
		if err := getHello(c); err != nil {
			return fmt.Errorf("HTTP check: GET %s, request %d on one connection: %w", HelloPath, i+1, err)
		}
	}
	tr := &http.Transport{DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: httpTimeout}
	base := "http://" + addr
	resp, err := client.Get(base + BulkPath)
	if err == nil {
		err = readAnswer(resp, BulkBody(), "application/octet-stream")
	}
	if err != nil {
		return fmt.Errorf("HTTP check: GET %s: %w", BulkPath, err)
	}
	upload := bytes.Repeat([]byte("x"), httpUploadSize)
	resp, err = client.Post(base+UploadPath, "application/octet-stream", bytes.NewReader(upload))
	if err == nil {
		err = readAnswer(resp, []byte(strconv.Itoa(httpUploadSize)), "text/plain")
	}
	if err != nil {
		return fmt.Errorf("HTTP check: POST %s: %w", UploadPath, err)
	}
	return nil
}

// readAnswer reads and closes resp's body and checks the response:
// status 200, the Content-Type ctype (parameters aside) and the body
// want.
func readAnswer(resp *http.Response, want []byte, ctype string) error {
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	return checkResponse(resp, body, want, ctype)
}

// checkResponse checks a response whose body has been read.
func checkResponse(resp *http.Response, body, want []byte, ctype string) error {
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %s, want 200", resp.Status)
	}
	if got, _, _ := strings.Cut(resp.Header.Get("Content-Type"), ";"); got != ctype {
		return fmt.Errorf("Content-Type %q, want %q", got, ctype)
	}
	if !bytes.Equal(body, want) {
		return fmt.Errorf("body of %d bytes %.32q, want %d bytes %.32q", len(body), body, len(want), want)
	}
	return nil
}

// getHello makes one keep-alive GET of HelloPath on c and checks the
// answer. It reads exactly the response: c is left ready for the next
// request, or idle.
func getHello(c net.Conn) error {
	c.SetDeadline(time.Now().Add(httpTimeout))
	defer c.SetDeadline(time.Time{})
	req := "GET " + HelloPath + " HTTP/1.1\r\nHost: " + c.RemoteAddr().String() + "\r\n\r\n"
	if _, err := io.WriteString(c, req); err != nil {
		return err
	}
	br := bufio.NewReaderSize(c, 1024)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	if err := checkResponse(resp, body, []byte(HelloBody), "text/plain"); err != nil {
		return err
	}
	if resp.Close {
		return errors.New("the server closes the connection after the response (no keep-alive)")
	}
	if br.Buffered() > 0 {
		return fmt.Errorf("%d bytes after the response", br.Buffered())
	}
	return nil
}
