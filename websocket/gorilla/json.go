package gorilla

import (
	"encoding/json"
	"io"
	"strings"
)

// WriteJSON writes v's JSON encoding as a text message.
func (c *Conn) WriteJSON(v any) error {
	w, err := c.NextWriter(TextMessage)
	if err != nil {
		return err
	}
	err1 := json.NewEncoder(w).Encode(v)
	err2 := w.Close()
	if err1 != nil {
		return err1
	}
	return err2
}

// ReadJSON reads the next message and decodes its JSON into v. A message
// that ends before a JSON value does returns io.ErrUnexpectedEOF.
func (c *Conn) ReadJSON(v any) error {
	_, r, err := c.NextReader()
	if err != nil {
		return err
	}
	err = json.NewDecoder(r).Decode(v)
	if err == io.EOF {
		err = io.ErrUnexpectedEOF // one value is expected
	}
	return err
}

// WriteJSON is c.WriteJSON(v).
//
// Deprecated: Use c.WriteJSON instead, as gorilla says.
func WriteJSON(c *Conn, v any) error { return c.WriteJSON(v) }

// ReadJSON is c.ReadJSON(v).
//
// Deprecated: Use c.ReadJSON instead, as gorilla says.
func ReadJSON(c *Conn, v any) error { return c.ReadJSON(v) }

// JoinMessages returns a reader of c's successive data messages, each
// followed by term; an error of c's reads ends it (a CloseError as
// io.EOF's stand-in is returned as is).
func JoinMessages(c *Conn, term string) io.Reader {
	return &joinReader{c: c, term: term}
}

type joinReader struct {
	c    *Conn
	term string
	r    io.Reader
}

func (j *joinReader) Read(p []byte) (int, error) {
	if j.r == nil {
		_, r, err := j.c.NextReader()
		if err != nil {
			return 0, err
		}
		if j.term != "" {
			r = io.MultiReader(r, strings.NewReader(j.term))
		}
		j.r = r
	}
	n, err := j.r.Read(p)
	if err == io.EOF {
		err = nil
		j.r = nil
	}
	return n, err
}
