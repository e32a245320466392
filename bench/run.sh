#!/usr/bin/env bash
# Reproduces every figure in docs/benchmarks.md.
#
#   bench/run.sh                 # all scenarios, both kinds, SQLite and PostgreSQL, 3 repetitions
#   REPS=5 bench/run.sh          # more repetitions
#   ENGINES=sqlite bench/run.sh  # one engine
#   KINDS=go bench/run.sh        # one kind of task (go | bash)
#   SCENARIOS=wide bench/run.sh  # wide, chain40, chain300 (comma-separated)
#   LOGS=/dev/shm bench/run.sh   # task logs as files (log_store = folder) on another
#                                # filesystem (default: in the database)
#   DAGSTEST=0 bench/run.sh      # without `weir dags test` (bench/dagstestbench, run right
#                                # after SQLite's figures when bash tasks are measured and
#                                # LOGS is unset; DAGSTEST_REPS=7 runs of each case)
#
# It ends with issue 14's targets judged on this run's figures (bench/targets):
# each target, the figure measured, ✔ or ✗; the exit status is 0 either way.
#
# PostgreSQL: set WEIR_BENCH_POSTGRES_DSN to a server's maintenance DSN
# (a fresh database is created per repetition), or leave it unset and this
# script starts a throwaway cluster from the installed binaries (as the
# postgres user when run as root, on a free loopback port, default durability
# settings except synchronous_commit=off, the PostgreSQL counterpart of
# SQLite's synchronous=NORMAL in WAL mode) and removes it afterwards.
#
# The task-state benchmark (docs/benchmarks.md, "State store") runs instead
# of the engine's with STATE=1:
#   STATE=1 bench/run.sh                      # ops (1 and 16 writers) and cleanup (1,000,000 rows), both engines
#   STATE=1 STATE_SCENARIOS=ops ENGINES=sqlite bench/run.sh
#   STATE=1 STATE_ARGS="-rows 100000 -batches 1000" bench/run.sh   # extra statebench flags
#
# The deferral benchmark (docs/benchmarks.md, "Deferral and the triggerer")
# runs instead of the engine's with DEFER=1: defer10k (10,000 timedelta
# triggers waiting at once, fire → resumed latency, RSS) and deferrt (the
# deferral round trip beside the hand-off), Go tasks:
#   DEFER=1 bench/run.sh                                  # both scenarios, both engines
#   DEFER=1 DEFER_SCENARIOS=deferrt ENGINES=sqlite bench/run.sh
#   DEFER=1 DEFER_ARGS="-defer-window 60s" bench/run.sh    # extra enginebench flags (defaults: -defer-lead 60s -defer-window 120s)
#   WEIR_BENCH_CPUPROFILE=/tmp/p.prof ...                 # a CPU profile of the standalone (last repetition)
#   WEIR_BENCH_TRACE=/tmp/t.out ...                       # an execution trace of it (go tool trace -pprof=sched|sync|syscall)
#
# Asset watchers (bench/watchbench, SQLite) instead of the engine's with WATCH=1:
#   WATCH=1 bench/run.sh                                  # latency, burst and idle
#   WATCH=1 WATCH_SCENARIOS=latency WATCH_ARGS="-items 500" bench/run.sh
#   WATCH=1 WATCH_SCENARIOS=emit bench/run.sh             # emission -> consumer's first task (not in the default list)
#
# Several worker processes (enginebench -workers N: an api-server, a scheduler and N
# workers, each its own process, on PostgreSQL; docs/benchmarks.md, "Worker processes")
# instead of the standalone with WORKERS:
#   WORKERS="1 2 4" ENGINES=postgres KINDS=go SCENARIOS=wide bench/run.sh
#
# The micro-benchmarks of the hot paths run with:
#   go test -run '^$' -bench . -benchtime 3x ./internal/scheduler/ ./internal/worker/ ./internal/execapi/
set -euo pipefail

cd "$(dirname "$0")/.."
REPS=${REPS:-3}
ENGINES=${ENGINES:-sqlite postgres}
KINDS=${KINDS:-go bash}
SCENARIOS=${SCENARIOS:-wide,chain40,chain300}
OUT=${OUT:-bench/results}
mkdir -p "$OUT"
BIN=$(mktemp -d)/enginebench
CGO_ENABLED=0 go build -o "$BIN" ./bench/enginebench
if [[ -n "${STATE:-}" ]]; then
	go build -o "$(dirname "$BIN")/statebench" ./bench/statebench
fi

# Every run's home (and LOGS folder) is removed at the end, not after its
# run: on ext4 without a journal, files deleted in the last minutes make
# each new file cost up to several times more (docs/performance-history.md,
# fourteenth round), which would fall on the next runs.
mkdir -p "$HOME/.cache/weir-enginebench"
HOMES=$(mktemp -d "$HOME/.cache/weir-enginebench/bench-XXXXXX")
LOGDIRS=()
RUNLOGS=() # this run's output files, judged against the targets at the end
PGDIR=""
cleanup() {
	if [[ -n "$PGDIR" ]]; then
		as_pg "$PGBIN/pg_ctl" -D "$PGDIR/data" -m fast stop >/dev/null 2>&1 || true
		rm -rf "$PGDIR"
	fi
	rm -rf "$(dirname "$BIN")" "$HOMES" "${LOGDIRS[@]}"
}
trap cleanup EXIT

if [[ -n "${WATCH:-}" ]]; then
	CGO_ENABLED=0 go build -o "$(dirname "$BIN")/weir" ./cmd/weir
	# shellcheck disable=SC2086 # WATCH_ARGS is a list of flags
	go run ./bench/watchbench -weir "$(dirname "$BIN")/weir" -scenario "${WATCH_SCENARIOS:-latency,burst,idle}" ${WATCH_ARGS:-} |
		tee "$OUT/sqlite-watch.txt"
	exit 0
fi

as_pg() {
	if [[ $(id -u) -eq 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi
}

start_postgres() {
	PGBIN=$(dirname "$(command -v initdb 2>/dev/null || ls -d /usr/lib/postgresql/*/bin/initdb | sort -V | tail -1)")
	PGDIR=$(mktemp -d /tmp/enginebench-pg-XXXXXX)
	[[ $(id -u) -eq 0 ]] && chown postgres "$PGDIR"
	local port
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	as_pg "$PGBIN/initdb" -D "$PGDIR/data" -A trust -U postgres -E UTF8 --no-instructions >/dev/null
	as_pg "$PGBIN/pg_ctl" -D "$PGDIR/data" -l "$PGDIR/log" -w \
		-o "-p $port -k $PGDIR -c listen_addresses=127.0.0.1 -c synchronous_commit=off -c max_connections=200" start >/dev/null
	export WEIR_BENCH_POSTGRES_DSN="postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable"
}

for engine in $ENGINES; do
	if [[ $engine == postgres && -z "${WEIR_BENCH_POSTGRES_DSN:-}" ]]; then
		start_postgres
	fi
	if [[ -n "${DEFER:-}" ]]; then
		log="$OUT/$engine-defer.txt"
		echo "== defer $engine ($(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg))" | tee "$log"
		# shellcheck disable=SC2086 # DEFER_ARGS is a list of flags
		"$BIN" -engine "$engine" -kind go -scenario "${DEFER_SCENARIOS:-defer10k,deferrt}" -reps "$REPS" -homes "$HOMES" -keep ${DEFER_ARGS:-} | tee -a "$log"
		continue
	fi
	if [[ -n "${STATE:-}" ]]; then
		log="$OUT/state-$engine.txt"
		echo "== state $engine ($(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg))" | tee "$log"
		# shellcheck disable=SC2086 # STATE_ARGS is a list of flags
		"$(dirname "$BIN")/statebench" -engine "$engine" -scenario "${STATE_SCENARIOS:-ops,cleanup}" -reps "$REPS" ${STATE_ARGS:-} | tee -a "$log"
		continue
	fi
	if [[ -n "${WORKERS:-}" ]]; then
		log="$OUT/$engine-workers.txt"
		: >"$log"
		for n in $WORKERS; do
			for kind in $KINDS; do
				echo "== $engine $kind workers=$n ($(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg))" | tee -a "$log"
				"$BIN" -engine "$engine" -kind "$kind" -scenario "$SCENARIOS" -reps "$REPS" -workers "$n" -homes "$HOMES" -keep | tee -a "$log"
			done
		done
		continue
	fi
	for kind in $KINDS; do
		log="$OUT/$engine-$kind${LOGS:+-logs$(echo "$LOGS" | tr / _)}.txt"
		env=""
		if [[ -n "${LOGS:-}" ]]; then
			LOGDIRS+=("$(mktemp -d "$LOGS/enginebench-logs-XXXXXX")")
			env="WEIR__LOGGING__LOG_STORE=folder,WEIR__LOGGING__BASE_LOG_FOLDER=${LOGDIRS[-1]}"
		fi
		echo "== $engine $kind logs=${LOGS:-home} ($(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg))" | tee "$log"
		"$BIN" -engine "$engine" -kind "$kind" -scenario "$SCENARIOS" -reps "$REPS" -env "$env" -homes "$HOMES" -keep | tee -a "$log"
		RUNLOGS+=("$log")
	done
	# `weir dags test` as a user runs it (the static binary, the whole
	# process), right after the standalone's SQLite figures and with its
	# homes in the same folder, for the start-up and per-step targets.
	if [[ $engine == sqlite && "${DAGSTEST:-1}" != 0 && -z "${LOGS:-}" && " $KINDS " == *" bash "* ]]; then
		log="$OUT/sqlite-dagstest.txt"
		CGO_ENABLED=0 go build -o "$(dirname "$BIN")/weir" ./cmd/weir
		go build -o "$(dirname "$BIN")/dagstestbench" ./bench/dagstestbench
		TMPDIR=$HOMES "$(dirname "$BIN")/dagstestbench" -weir "$(dirname "$BIN")/weir" -scenario one,chain40 \
			-reps "${DAGSTEST_REPS:-7}" -keep | tee "$log"
		RUNLOGS+=("$log")
	fi
done
[[ -n "${DEFER:-}${STATE:-}${WORKERS:-}" ]] && exit 0
echo
go run ./bench/targets "${RUNLOGS[@]}"
