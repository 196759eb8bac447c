// Package docstest holds no code: its tests keep the repository's front
// documents true to the code, where a machine can tell — the Go release
// README.md asks for is the one go.mod requires.
//
// The tests read files from the module's root and need the standard
// library only.
package docstest
