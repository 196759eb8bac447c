#!/usr/bin/env bash
# gaio-compat.sh: prove that the Go programs shipped with github.com/xtaci/gaio
# (every ```go block of its README.md that holds `package main`, and every
# examples/**/main.go) compile and vet against github.com/galeio/gale/aio with
# ONLY the import line changed:
#
#     "github.com/xtaci/gaio"  ->  gaio "github.com/galeio/gale/aio"
#
# Everything happens in a temporary directory, removed on exit; no gaio code
# is ever copied into this repository. As a control, each extracted program is
# first built, unchanged, against gaio itself, so that a failure against our
# package can't come from a bad extraction.
set -euo pipefail

GAIO_MODULE=github.com/xtaci/gaio
GAIO_VERSION=v1.2.34 # pinned: the module proxy does not list gaio's versions
GAIO_IMPORT='"github.com/xtaci/gaio"'
OUR_MODULE=github.com/galeio/gale
OUR_IMPORT_LINE='gaio "github.com/galeio/gale/aio"'

die() { echo "gaio-compat: FAIL: $*" >&2; exit 1; }

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
[ -f "$ROOT/go.mod" ] || die "no go.mod in repo root $ROOT"
mod=$(awk '$1 == "module" { print $2; exit }' "$ROOT/go.mod")
[ "$mod" = "$OUR_MODULE" ] || die "$ROOT/go.mod declares module '$mod', want $OUR_MODULE"
GOVER=$(awk '$1 == "go" { print $2; exit }' "$ROOT/go.mod")
[ -n "$GOVER" ] || die "no go directive in $ROOT/go.mod"

export GOWORK=off
TMP=$(mktemp -d "${TMPDIR:-/tmp}/gaio-compat.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

echo "gaio-compat: repo root $ROOT"
echo "gaio-compat: work dir  $TMP"

# --- 1. fetch gaio at the pinned version, in a throwaway module -------------
UP="$TMP/upstream"
mkdir -p "$UP"
cat >"$UP/go.mod" <<EOF
module gaiocompat/upstream

go $GOVER

require $GAIO_MODULE $GAIO_VERSION
EOF
(cd "$UP" && go mod download -json "$GAIO_MODULE@$GAIO_VERSION") >"$TMP/download.json" ||
	die "go mod download $GAIO_MODULE@$GAIO_VERSION failed"
GAIO_DIR=$(sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}[[:space:]]*$/\1/p' "$TMP/download.json" | head -n 1)
if [ -z "$GAIO_DIR" ] || [ ! -f "$GAIO_DIR/README.md" ]; then
	die "no README.md in downloaded gaio (Dir='$GAIO_DIR')"
fi
echo "gaio-compat: $GAIO_MODULE@$GAIO_VERSION is in $GAIO_DIR"

# --- 2. collect the programs -------------------------------------------------
# Each program becomes $TMP/src/<name>/*.go; $TMP/units lists "<name>\t<origin>".
SRC="$TMP/src"
mkdir -p "$SRC"
: >"$TMP/units"

# README: every ```go (or ```golang) fenced block that contains `package main`.
awk -v dir="$SRC" -v units="$TMP/units" '
	!infence && /^[[:space:]]*```[[:space:]]*(go|golang)[[:space:]]*$/ {
		infence = 1; buf = ""; hasmain = 0; start = NR; next
	}
	infence && /^[[:space:]]*```[[:space:]]*$/ {
		infence = 0
		if (hasmain) {
			n++
			name = "ex" n
			system("mkdir -p \"" dir "/" name "\"")
			f = dir "/" name "/main.go"
			printf "%s", buf > f
			close(f)
			printf "%s\tREADME.md ```go block %d (lines %d-%d)\n", name, n, start, NR >> units
			close(units)
		}
		next
	}
	infence {
		buf = buf $0 "\n"
		if ($0 ~ /^[[:space:]]*package[[:space:]]+main([[:space:]]|$)/) hasmain = 1
	}
	END { if (infence) { print "unterminated ```go block starting at line " start > "/dev/stderr"; exit 1 } }
' "$GAIO_DIR/README.md" || die "could not parse $GAIO_DIR/README.md"
readme_count=$(wc -l <"$TMP/units")
[ "$readme_count" -gt 0 ] || die "found no \`\`\`go block with 'package main' in gaio's README.md"

# examples/: every main.go (with the other non-test .go files of its directory).
example_count=0
if [ -d "$GAIO_DIR/examples" ]; then
	while IFS= read -r mainfile; do
		exdir=$(dirname "$mainfile")
		rel=${exdir#"$GAIO_DIR"/}
		name="examples-$(printf '%s' "${rel#examples/}" | tr '/' '-')"
		mkdir -p "$SRC/$name"
		for f in "$exdir"/*.go; do
			case "$f" in *_test.go) continue ;; esac
			cat "$f" >"$SRC/$name/$(basename "$f")"
		done
		printf '%s\t%s/*.go\n' "$name" "$rel" >>"$TMP/units"
		example_count=$((example_count + 1))
	done < <(find "$GAIO_DIR/examples" -type f -name main.go | LC_ALL=C sort)
fi
[ "$example_count" -gt 0 ] || echo "gaio-compat: warning: gaio has no examples/**/main.go"

echo "gaio-compat: found $readme_count README program(s) and $example_count example program(s):"
while IFS=$'\t' read -r name origin; do
	echo "  $name <- $origin"
done <"$TMP/units"

# --- 3. port: change the import line and nothing else ------------------------
OURS="$TMP/gale"
mkdir -p "$OURS"
while IFS=$'\t' read -r name _; do
	mkdir -p "$OURS/$name" "$UP/$name"
	nimports=0
	for f in "$SRC/$name"/*.go; do
		base=$(basename "$f")
		cp "$f" "$UP/$name/$base"
		# `"github.com/xtaci/gaio"` in an import block or a one-line import,
		# optionally aliased; a trailing comment is kept.
		sed -E \
			-e 's#^([[:space:]]*(import[[:space:]]+)?)"github\.com/xtaci/gaio"#\1'"$OUR_IMPORT_LINE"'#' \
			-e 's#^([[:space:]]*(import[[:space:]]+)?[A-Za-z_][A-Za-z0-9_]*[[:space:]]+)"github\.com/xtaci/gaio"#\1"github.com/galeio/gale/aio"#' \
			"$f" >"$OURS/$name/$base"
		if grep -qF "$GAIO_IMPORT" "$OURS/$name/$base"; then
			die "$name/$base: an import of $GAIO_IMPORT was left unported"
		fi
		[ "$(wc -l <"$f")" -eq "$(wc -l <"$OURS/$name/$base")" ] || die "$name/$base: line count changed"
		changed=$( (diff "$f" "$OURS/$name/$base" || true) | grep -c '^>' || true)
		nimports=$((nimports + changed))
	done
	[ "$nimports" -eq 1 ] || die "$name: expected exactly 1 changed line (the gaio import), got $nimports"
	echo "  $name: ported (1 import line changed)"
done <"$TMP/units"

# --- 4. modules ---------------------------------------------------------------
if ! (cd "$ROOT" && go list "$OUR_MODULE/aio") >"$TMP/list-aio.log" 2>&1; then
	sed 's/^/      /' "$TMP/list-aio.log" >&2
	die "package $OUR_MODULE/aio does not exist or does not load in $ROOT"
fi
cat >"$OURS/go.mod" <<EOF
module gaiocompat/gale

go $GOVER

require $OUR_MODULE v0.0.0

replace $OUR_MODULE => $ROOT
EOF
[ -f "$ROOT/go.sum" ] && cp "$ROOT/go.sum" "$OURS/go.sum"
(cd "$UP" && go mod tidy) >"$TMP/tidy-upstream.log" 2>&1 || {
	cat "$TMP/tidy-upstream.log" >&2
	die "go mod tidy failed for the upstream control module"
}
# -e: keep going on errors in our package; the builds below report them.
(cd "$OURS" && go mod tidy -e) >"$TMP/tidy-gale.log" 2>&1 || {
	cat "$TMP/tidy-gale.log" >&2
	die "go mod tidy failed for the gale module"
}

# --- 5. build and vet -----------------------------------------------------------
# check MODULE_DIR NAME: go build + go vet of ./NAME; prints the log on failure.
check() {
	local moddir=$1 name=$2 log
	log="$TMP/$(basename "$moddir")-$name.log"
	if (cd "$moddir" && go build -o /dev/null "./$name" && go vet "./$name") >"$log" 2>&1; then
		return 0
	fi
	sed 's/^/      /' "$log" >&2
	return 1
}

echo "gaio-compat: control: building the unchanged programs against $GAIO_MODULE@$GAIO_VERSION"
while IFS=$'\t' read -r name origin; do
	if check "$UP" "$name"; then
		echo "  ok    $name ($origin)"
	else
		die "control build of $name ($origin) against gaio itself failed: extraction is broken"
	fi
done <"$TMP/units"

echo "gaio-compat: building the ported programs against $OUR_MODULE/aio ($ROOT)"
failed=0
passed=0
while IFS=$'\t' read -r name origin; do
	if check "$OURS" "$name"; then
		echo "  ok    $name ($origin) compiles and vets with $OUR_MODULE/aio"
		passed=$((passed + 1))
	else
		echo "  FAIL  $name ($origin) does not compile/vet with $OUR_MODULE/aio" >&2
		failed=$((failed + 1))
	fi
done <"$TMP/units"

[ "$passed" -gt 0 ] || [ "$failed" -gt 0 ] || die "no program was built"
if [ "$failed" -ne 0 ]; then
	die "$failed of $((passed + failed)) gaio program(s) do not compile against $OUR_MODULE/aio"
fi
echo "gaio-compat: all $passed gaio program(s) compile against $OUR_MODULE/aio with only the import path changed"
