#!/usr/bin/env bash
# Compares two revisions by alternating single runs of bench/enginebench, in
# ABBA order (old new, new old, ...), and prints each pair and the median of
# the pairs' ratios new/old. This host's speed drifts by tens of percent
# within minutes (docs/benchmarks.md, "Machine"): a pair run back to back
# sees the same host, a median of three repetitions per build does not.
#
#   bench/abba.sh OLD NEW                     # SQLite, Go tasks, chain300, 6 pairs
#   ENGINE=postgres SCENARIO=wide PAIRS=4 bench/abba.sh 33577a2 HEAD
#   KIND=bash ENV=WEIR__LOGGING__LOG_STORE=folder bench/abba.sh main~3 main
#
# ENGINE (sqlite | postgres), KIND (go | bash), SCENARIO (wide | chain40 |
# chain300), PAIRS, ENV (the standalone's extra settings, default
# database-kept logs). PostgreSQL needs WEIR_BENCH_POSTGRES_DSN, a server's
# maintenance DSN (a fresh database is made per run; bench/run.sh starts a
# throwaway server if you have none). The ratio is of ms a task for chains
# and of ti/s for wide: above 1 is faster for wide, slower for chains.
set -euo pipefail

if [[ $# -ne 2 ]]; then
	echo "usage: bench/abba.sh OLD_REVISION NEW_REVISION" >&2
	exit 2
fi
cd "$(dirname "$0")/.."
ENGINE=${ENGINE:-sqlite}
KIND=${KIND:-go}
SCENARIO=${SCENARIO:-chain300}
PAIRS=${PAIRS:-6}
ENV=${ENV:-WEIR__LOGGING__LOG_STORE=database}
if [[ $ENGINE == postgres && -z "${WEIR_BENCH_POSTGRES_DSN:-}" ]]; then
	echo "bench/abba.sh: ENGINE=postgres needs WEIR_BENCH_POSTGRES_DSN (a server's maintenance DSN)" >&2
	exit 2
fi

work=$(mktemp -d)
cleanup() {
	for side in old new; do
		git worktree remove --force "$work/$side" >/dev/null 2>&1 || true
	done
	rm -rf "$work"
}
trap cleanup EXIT
for side in old new; do
	rev=$1
	[[ $side == new ]] && rev=$2
	git worktree add --quiet --detach "$work/$side" "$rev"
	(cd "$work/$side" && CGO_ENABLED=0 go build -o "$work/enginebench-$side" ./bench/enginebench)
done

field=per_task
[[ $SCENARIO == wide ]] && field=ti/s
run() {
	"$work/enginebench-$1" -engine "$ENGINE" -kind "$KIND" -scenario "$SCENARIO" -reps 1 \
		-dsn "${WEIR_BENCH_POSTGRES_DSN:-}" -env "$ENV" 2>&1 | grep '^MEDIAN' |
		grep -oE " $field=[0-9.]+" | grep -oE '[0-9.]+$'
}
echo "# $ENGINE $KIND $SCENARIO, $PAIRS pairs, $field, old $1 new $2, load $(cut -d' ' -f1-3 /proc/loadavg)"
ratios=()
for i in $(seq "$PAIRS"); do
	if ((i % 2)); then
		old=$(run old)
		new=$(run new)
	else
		new=$(run new)
		old=$(run old)
	fi
	ratio=$(awk -v n="$new" -v o="$old" 'BEGIN { printf "%.3f", n / o }')
	ratios+=("$ratio")
	echo "pair $i: old $old new $new ratio $ratio"
done
printf '%s\n' "${ratios[@]}" | sort -n |
	awk '{ r[NR] = $1 } END { m = (NR % 2) ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2; printf "median ratio new/old %.3f\n", m }'
