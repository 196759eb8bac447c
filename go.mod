module github.com/galeio/gale

go 1.25.0

require golang.org/x/sys v0.45.0
