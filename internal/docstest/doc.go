// Package docstest holds no code: its tests keep the repository's front
// documents true to the code, where a machine can tell: the Go release
// README.md asks for is the one go.mod requires, README's programs build
// (go vet, run by the go command on copies under testdata, removed after),
// and the relative links of README and docs/bench/figures.md lead to files
// that exist.
package docstest
