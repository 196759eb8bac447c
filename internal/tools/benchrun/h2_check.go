package benchrun

import (
	"fmt"
	"io"
	"net/http"
)

// checkH2 checks, before an HTTP/2 server is measured, that it answers
// HelloPath over h2c by prior knowledge as HTTPHandler does: h2load
// counts statuses but reads no body. Two GETs go on one connection of
// net/http's client (its bundled HTTP/2), which then closes it.
func checkH2(addr string) error {
	p := new(http.Protocols)
	p.SetUnencryptedHTTP2(true) // and no HTTP/1: the preface first
	tr := &http.Transport{Protocols: p}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: httpTimeout}
	for i := range 2 {
		if err := getH2(client, "http://"+addr+HelloPath); err != nil {
			return fmt.Errorf("HTTP/2 check: GET %s, request %d: %w", HelloPath, i+1, err)
		}
	}
	return nil
}

// getH2 makes one GET of url with client and checks that the answer is
// HelloBody, over HTTP/2.
func getH2(client *http.Client, url string) error {
	resp, err := client.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.ProtoMajor != 2 {
		return fmt.Errorf("answered over %s, want HTTP/2", resp.Proto)
	}
	return checkResponse(resp, body, []byte(HelloBody), "text/plain")
}
