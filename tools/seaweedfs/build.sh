#!/usr/bin/env bash
# Builds SeaweedFS's `weed` binary, which the S3 tests run as a real
# S3-compatible server (internal/testutil/s3test), and prints its path.
#
#   tools/seaweedfs/build.sh          build if missing, print the path
#   tools/seaweedfs/build.sh --path   print the path only
#
# The binary (~230 MB) is kept out of git, in a cache directory:
# $WEIR_TOOLS_CACHE, else ${XDG_CACHE_HOME:-$HOME/.cache}/weir-tools. Its
# name carries a hash of this module's go.mod and go.sum, so changing the
# pinned SeaweedFS version builds a new one. A first build takes about
# 3.5 minutes on 2 cores; Go's build cache makes a rebuild quick.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
key="$(cat "$here/go.mod" "$here/go.sum" | sha256sum | cut -c1-12)"
cache="${WEIR_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/weir-tools}"
bin="$cache/weed-$key"

if [ "${1:-}" = "--path" ]; then
  echo "$bin"
  exit 0
fi
if [ ! -x "$bin" ]; then
  mkdir -p "$cache"
  # One build at a time: test binaries of several packages may ask at once.
  exec 9>"$cache/weed.lock"
  flock 9
  if [ ! -x "$bin" ]; then
    echo "building SeaweedFS weed into $bin (first build takes minutes)" >&2
    (cd "$here" && go build -o "$bin.tmp.$$" github.com/seaweedfs/seaweedfs/weed)
    mv "$bin.tmp.$$" "$bin"
  fi
fi
echo "$bin"
