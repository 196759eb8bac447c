// Package apitest holds no code: its tests keep gale's public API sealed
// and make every change to it visible in review.
//
// The tests load the public packages (aio, backend, engine, netconn, httpd, http1,
// restart, websocket and metrics; not internal/, cmd/, examples/ or bench/) from the export data
// `go list -export -deps -json` writes, built for linux/amd64, and walk
// every exported object with go/types:
//
//   - package-level functions, variables and constants, by their type;
//   - exported types: the exported fields of a struct (embedded ones too),
//     the methods of an interface, and the exported methods in the method
//     set of *T (T's own and the promoted ones);
//   - the methods of a type reached through an exported alias.
//
// TestNoInternalTypes fails on every exported identifier whose signature
// names a type from an internal/ package, an alias of one included (the
// mistake three packages' Backend aliases of loop.Backend were, before
// package backend). A method that only exists to
// satisfy an internal interface (the loop's Owner, say) belongs on an
// unexported type over the same struct, as engine's connOwner does.
//
// Decisions: the walk does not descend into a named type's underlying
// type where it is named, since an exported type is walked on its own and
// an unexported one cannot be named by a user; the exported fields of an
// anonymous struct and the methods of an anonymous interface are walked.
// Parameter names are no part of a signature. Not checked: the methods
// of an unexported type an exported identifier has (today only
// engine.ErrEngineStopped, a *stoppedError).
//
// TestAPI compares the walk, one line per exported identifier in the
// manner of Go's api/go1.*.txt, with the golden file api/gale.txt at the
// module root and fails with the lines added and removed, so that an
// accidental change to the API shows in review. A change to the
// public API must update that file in the same commit:
//
//	go test ./internal/apitest -update
//
// TestPackageDocs fails on a public package whose documentation has no
// "# Limitations" section or fewer than three Examples.
//
// The API is the one built for Linux; identifiers that exist only on other
// platforms are not checked. The tests need the go command (they are
// skipped without one) and the standard library only.
package apitest
