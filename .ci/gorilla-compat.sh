#!/usr/bin/env bash
# gorilla-compat.sh: run gorilla/websocket's own test suite against
# github.com/galeio/gale/websocket/gorilla, and report how much of it
# passes, with the reason for each test that does not.
#
# gorilla's tests are internal (package websocket), so they run in a
# temporary module whose package websocket is ours re-exported: a
# generated alias for every exported name (type Conn = gorilla.Conn,
# consts, vars, functions), and shims for the few unexported helpers the
# tests use that are not gorilla's code under test (computeAcceptKey, the
# RFC 6455 §4.2.2 formula a test's fake server needs). A test that does
# not compile there (it uses gorilla's internals: newConn, maskBytes,
# Conn's fields...) is removed mechanically by .ci/gorilla-prune, which
# records the compiler's reason. The rest run under -race.
#
# Everything happens in a temporary directory, removed on exit; no
# gorilla code is ever copied into this repository. The run fails only
# on a regression: a test listed in .ci/gorilla-expected.txt that does
# not pass. (A test that newly passes is reported: add it to the list.)
set -euo pipefail

GORILLA_MODULE=github.com/gorilla/websocket
GORILLA_VERSION=v1.5.3
OUR_MODULE=github.com/galeio/gale
OUR_PKG=$OUR_MODULE/websocket/gorilla

die() { echo "gorilla-compat: FAIL: $*" >&2; exit 1; }

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
EXPECTED=$ROOT/.ci/gorilla-expected.txt
[ -f "$ROOT/go.mod" ] || die "no go.mod in repo root $ROOT"
GOVER=$(awk '$1 == "go" { print $2; exit }' "$ROOT/go.mod")
[ -f "$EXPECTED" ] || die "no $EXPECTED"

export GOWORK=off
TMP=$(mktemp -d "${TMPDIR:-/tmp}/gorilla-compat.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
echo "gorilla-compat: work dir $TMP"

# --- 1. fetch gorilla/websocket at the pinned version --------------------------
DL="$TMP/download"
mkdir -p "$DL"
printf 'module gorillacompat/download\n\ngo %s\n' "$GOVER" >"$DL/go.mod"
(cd "$DL" && go mod download -json "$GORILLA_MODULE@$GORILLA_VERSION") >"$TMP/download.json" ||
	die "go mod download $GORILLA_MODULE@$GORILLA_VERSION failed"
GDIR=$(sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}[[:space:]]*$/\1/p' "$TMP/download.json" | head -n 1)
[ -n "$GDIR" ] && [ -f "$GDIR/conn.go" ] || die "no conn.go in the downloaded module (Dir='$GDIR')"
echo "gorilla-compat: $GORILLA_MODULE@$GORILLA_VERSION is in $GDIR"

# --- 2. the module: gorilla's tests over our package ---------------------------
PRUNE="$TMP/gorilla-prune"
(cd "$ROOT" && go build -o "$PRUNE" ./.ci/gorilla-prune) || die "cannot build .ci/gorilla-prune"
M="$TMP/m"
mkdir -p "$M"
cp "$GDIR"/*_test.go "$M/"
chmod u+w "$M"/*.go
"$PRUNE" list "$M" | LC_ALL=C sort >"$TMP/all.txt"
"$PRUNE" aliases "$ROOT/websocket/gorilla" "$OUR_PKG" >"$M/alias.go"
cat >"$M/shim.go" <<'SHIM'
package websocket

import (
	"crypto/sha1"
	"encoding/base64"
)

// computeAcceptKey is RFC 6455 §4.2.2's Sec-WebSocket-Accept, for the
// tests' own fake servers (it is not the code under test).
func computeAcceptKey(challengeKey string) string {
	h := sha1.New()
	h.Write([]byte(challengeKey + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	return base64.StdEncoding.EncodeToString(h.Sum(nil))
}
SHIM
cat >"$M/go.mod" <<MOD
module gorillacompat/websocket

go $GOVER

require $OUR_MODULE v0.0.0

replace $OUR_MODULE => $ROOT
MOD
cp "$ROOT/go.sum" "$M/go.sum"
(cd "$M" && go mod tidy -e) >"$TMP/tidy.log" 2>&1 || { cat "$TMP/tidy.log" >&2; die "go mod tidy failed"; }

# --- 3. remove what does not compile, until the rest does ----------------------
: >"$TMP/removed.txt"
for i in $(seq 1 20); do
	if (cd "$M" && go test -race -c -o "$TMP/ws.test" -gcflags=-e .) >"$TMP/build.log" 2>&1; then
		break
	fi
	[ "$i" -lt 20 ] || { cat "$TMP/build.log" >&2; die "still does not compile after 20 rounds"; }
	"$PRUNE" prune "$M" "$TMP/build.log" "$TMP/removed.txt" || { cat "$TMP/build.log" >&2; die "cannot prune"; }
done
"$PRUNE" list "$M" | LC_ALL=C sort >"$TMP/compiled.txt"

# --- 4. run them, each in a process of its own ---------------------------------
# So that one that panics (some of gorilla's fail from a goroutine after
# they returned) or hangs does not take the others with it.
LOGS="$TMP/logs"
mkdir -p "$LOGS"
: >"$TMP/status.txt"
while IFS=$'\t' read -r name file; do
	set +e
	(cd "$M" && "$TMP/ws.test" -test.v -test.count=1 -test.timeout=120s -test.run "^$name\$") >"$LOGS/$name" 2>&1
	rc=$?
	set -e
	if grep -q "^--- PASS: $name " "$LOGS/$name" && [ "$rc" -eq 0 ]; then
		st=PASS
	elif grep -q '^panic: test timed out' "$LOGS/$name"; then
		st=HANG
	elif grep -q "^--- SKIP: $name " "$LOGS/$name"; then
		st=SKIP
	elif grep -q "^--- FAIL: $name \|^panic: " "$LOGS/$name" || [ "$rc" -ne 0 ]; then
		st=FAIL
	else
		st=NOTRUN # an Example without // Output is only compiled
	fi
	printf '%s\t%s\t%s\n' "$name" "$file" "$st" >>"$TMP/status.txt"
done <"$TMP/compiled.txt"
awk -F'\t' '$3 == "PASS" { print $1 }' "$TMP/status.txt" | LC_ALL=C sort >"$TMP/pass.txt"
count() { awk -F'\t' -v s="$1" '$3 == s' "$TMP/status.txt" | wc -l; }

# --- 5. report ---------------------------------------------------------------------
total=$(wc -l <"$TMP/all.txt")
compiled=$(wc -l <"$TMP/compiled.txt")
npass=$(wc -l <"$TMP/pass.txt")
echo
echo "gorilla-compat: gorilla/websocket $GORILLA_VERSION's suite against $OUR_PKG:"
echo "  $total tests and examples; $compiled compile against it; $npass pass; $(count FAIL) fail; $(count SKIP) skip; $(count HANG) hang; $(count NOTRUN) not run"
echo
echo "not compiled (removed, with the compiler's reason):"
while IFS=$'\t' read -r name file; do
	why=$(awk -F'\t' -v n="$name" '$1 == n { print $3; exit }' "$TMP/removed.txt")
	[ -n "$why" ] || why="(its file's declarations it needs were removed)"
	if ! grep -q "^$name	" "$TMP/compiled.txt"; then
		printf '  %-40s %s: %s\n' "$name" "$file" "$why"
	fi
done <"$TMP/all.txt"
echo
echo "compiled, not passing:"
while IFS=$'\t' read -r name file st; do
	case $st in
	PASS) continue ;;
	HANG) why="hangs (over 120 s)" ;;
	SKIP) why="skipped by the test" ;;
	NOTRUN) why="not run (an Example without // Output is only compiled)" ;;
	FAIL)
		why=$(grep -E '^[[:space:]]+[A-Za-z0-9_]+\.go:[0-9]+:|^panic: ' "$LOGS/$name" | sed 's/^[[:space:]]*//' | head -2 | paste -sd ';' -)
		why="FAIL: ${why:-see the log}"
		;;
	esac
	printf '  %-40s %s: %s\n' "$name" "$file" "$why"
done <"$TMP/status.txt"

# --- 6. regressions ------------------------------------------------------------------
regress=0
while read -r name; do
	case "$name" in '' | '#'*) continue ;; esac
	if ! grep -qx "$name" "$TMP/pass.txt"; then
		echo "gorilla-compat: REGRESSION: $name is expected to pass and does not" >&2
		regress=$((regress + 1))
	fi
done <"$EXPECTED"
while read -r name; do
	grep -qx "$name" "$EXPECTED" || echo "gorilla-compat: note: $name passes and is not in .ci/gorilla-expected.txt: add it"
done <"$TMP/pass.txt"
if [ "$regress" -ne 0 ]; then
	while read -r name; do
		case "$name" in '' | '#'*) continue ;; esac
		grep -qx "$name" "$TMP/pass.txt" && continue
		echo "--- $name's log:" >&2
		head -100 "$LOGS/$name" >&2 2>/dev/null || echo "(not compiled)" >&2
	done <"$EXPECTED"
	die "$regress test(s) of gorilla's suite expected to pass do not"
fi
echo "gorilla-compat: ok: every test expected to pass passes ($npass of $total)"
