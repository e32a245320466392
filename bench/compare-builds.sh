#!/usr/bin/env bash
# Compares two enginebench builds (say, the start of a round and now) side by side on a shared
# machine: Go chain300 and wide on SQLite and on a throwaway PostgreSQL cluster, each build in
# turn, twice; then the bash kind (with its raw-spawn BASELINE and RATIO lines) of each once.
#
#   git worktree add --detach /tmp/wt-old <rev> && (cd /tmp/wt-old && go build -o /tmp/eb_old ./bench/enginebench)
#   go build -o /tmp/eb ./bench/enginebench
#   bench/compare-builds.sh /tmp/eb_old /tmp/eb
set -euo pipefail
old=${1:?usage: compare-builds.sh OLD_ENGINEBENCH NEW_ENGINEBENCH}
new=${2:?usage: compare-builds.sh OLD_ENGINEBENCH NEW_ENGINEBENCH}

as_pg() { if [[ $(id -u) -eq 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi; }
PGBIN=$(dirname "$(command -v initdb 2>/dev/null || ls -d /usr/lib/postgresql/*/bin/initdb | sort -V | tail -1)")
PGDIR=$(mktemp -d /tmp/compare-pg-XXXXXX)
[[ $(id -u) -eq 0 ]] && chown postgres "$PGDIR"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
as_pg "$PGBIN/initdb" -D "$PGDIR/data" -A trust -U postgres -E UTF8 --no-instructions >/dev/null
as_pg "$PGBIN/pg_ctl" -D "$PGDIR/data" -l "$PGDIR/log" -w -o "-p $port -k $PGDIR -c listen_addresses=127.0.0.1" start >/dev/null
trap 'as_pg "$PGBIN/pg_ctl" -D "$PGDIR/data" -m fast stop >/dev/null 2>&1 || true; rm -rf "$PGDIR"' EXIT
export WEIR_BENCH_POSTGRES_DSN="postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable"

uptime
for _ in 1 2; do
	for b in "$old" "$new"; do
		for engine in sqlite postgres; do
			echo "== $b $engine"
			"$b" -engine "$engine" -kind go -scenario chain300,wide -reps 1 2>&1 | grep MEDIAN
		done
	done
done
for b in "$new" "$old"; do
	echo "== $b bash"
	"$b" -engine sqlite -kind bash -scenario chain300,wide -reps 1 2>&1 | grep -E "MEDIAN|BASELINE|RATIO"
done
uptime
