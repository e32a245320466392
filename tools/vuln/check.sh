#!/usr/bin/env bash
# govulncheck over Weir's code against a pinned snapshot of the Go
# vulnerability database, so the check works where vuln.go.dev cannot be
# reached (CI here has the Go module proxy only).
#
#   tools/vuln/check.sh      exit 0: no reachable vulnerability; 3: found
#
# The database is built from golang.org/x/vulndb's OSV files (the version
# pinned in this module's go.mod; bump it to take newer advisories) with
# its own indexdb command, into a cache directory: $WEIR_TOOLS_CACHE, else
# ${XDG_CACHE_HOME:-$HOME/.cache}/weir-tools. Only vulnerabilities in code
# Weir actually calls fail the check (govulncheck's default).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
mod="$here/go.mod"
# go list names a module's folder only once it is in the module cache: on
# a fresh machine, download it first.
(cd "$here" && go mod download golang.org/x/vulndb)
vulndb="$(cd "$here" && go list -m -f '{{.Dir}}' golang.org/x/vulndb)"
if [ ! -d "$vulndb/data/osv" ]; then
  echo "golang.org/x/vulndb's OSV files are not at '$vulndb/data/osv'" >&2
  exit 1
fi
key="$(cat "$here/go.mod" "$here/go.sum" | sha256sum | cut -c1-12)"
cache="${WEIR_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/weir-tools}"
db="$cache/vulndb-$key"
if [ ! -f "$db/index/db.json" ]; then
  mkdir -p "$cache"
  echo "building the vulnerability database into $db (about 2 minutes)" >&2
  rm -rf "$db.tmp.$$"
  (cd "$here" && go run golang.org/x/vulndb/cmd/indexdb -vulns "$vulndb/data/osv" -out "$db.tmp.$$")
  rm -rf "$db"
  mv "$db.tmp.$$" "$db"
fi
cd "$root"
echo "govulncheck against $(basename "$vulndb")" >&2
exec go run -modfile="$mod" golang.org/x/vuln/cmd/govulncheck -db "file://$db" ./...
