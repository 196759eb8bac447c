package main

import (
	"embed"
	"io/fs"
)

// static holds the page: one file, with its script, which speaks the
// protocol of event (room.go) as the test's clients do.
//
//go:embed static
var static embed.FS

func pageFS() fs.FS {
	page, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the directory is embedded: cannot fail
	}
	return page
}
