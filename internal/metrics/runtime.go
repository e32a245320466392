package metrics

import (
	"cmp"
	"database/sql"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/weirflow/weir/internal/procstat"
	"github.com/weirflow/weir/internal/sysfile"
)

// The Go runtime's, the process's and a database pool's series, under the
// names and meanings prometheus/client_golang's collectors give them, so
// that the usual dashboards read them.

// goFamilies are the go_* series of this process's runtime.
func goFamilies() []family {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	gc := debug.GCStats{PauseQuantiles: make([]time.Duration, 5)}
	debug.ReadGCStats(&gc)
	threads, _ := runtime.ThreadCreateProfile(nil)
	pauses := family{name: "go_gc_duration_seconds", typ: typeSummary,
		help: "A summary of the wall-time pause (stop-the-world) duration in garbage collection cycles."}
	for i, q := range []string{"0", "0.25", "0.5", "0.75", "1"} {
		var v float64
		if gc.NumGC > 0 {
			v = gc.PauseQuantiles[i].Seconds()
		}
		pauses.samples = append(pauses.samples, sample{labels: []label{{"quantile", q}}, value: v})
	}
	pauses.samples = append(pauses.samples, sample{suffix: "_sum", value: gc.PauseTotal.Seconds()},
		sample{suffix: "_count", value: float64(gc.NumGC)})
	b := func(v uint64) float64 { return float64(v) }
	return []family{
		pauses, gauge("go_info", "Information about the Go environment.", 1, label{"version", runtime.Version()}),
		gauge("go_gc_gomemlimit_bytes", "Go runtime memory limit configured by the user (GOMEMLIMIT, debug.SetMemoryLimit), otherwise math.MaxInt64.", float64(debug.SetMemoryLimit(-1))),
		gauge("go_goroutines", "Number of goroutines that currently exist.", float64(runtime.NumGoroutine())),
		gauge("go_threads", "Number of OS threads created.", float64(threads)),
		gauge("go_sched_gomaxprocs_threads", "The current runtime.GOMAXPROCS setting: the number of OS threads that can execute Go code at once.", float64(runtime.GOMAXPROCS(0))),
		gauge("go_memstats_alloc_bytes", "Number of bytes allocated in heap and currently in use.", b(ms.HeapAlloc)),
		counter("go_memstats_alloc_bytes_total", "Total number of bytes allocated in heap until now, even if released already.", b(ms.TotalAlloc)),
		gauge("go_memstats_buck_hash_sys_bytes", "Number of bytes used by the profiling bucket hash table.", b(ms.BuckHashSys)),
		counter("go_memstats_frees_total", "Total number of heap objects frees.", b(ms.Frees)),
		gauge("go_memstats_gc_sys_bytes", "Number of bytes used for garbage collection system metadata.", b(ms.GCSys)),
		gauge("go_memstats_heap_alloc_bytes", "Number of heap bytes allocated and currently in use.", b(ms.HeapAlloc)),
		gauge("go_memstats_heap_idle_bytes", "Number of heap bytes waiting to be used.", b(ms.HeapIdle)),
		gauge("go_memstats_heap_inuse_bytes", "Number of heap bytes that are in use.", b(ms.HeapInuse)),
		gauge("go_memstats_heap_objects", "Number of currently allocated objects.", b(ms.HeapObjects)),
		gauge("go_memstats_heap_released_bytes", "Number of heap bytes released to OS.", b(ms.HeapReleased)),
		gauge("go_memstats_heap_sys_bytes", "Number of heap bytes obtained from system.", b(ms.HeapSys)),
		gauge("go_memstats_last_gc_time_seconds", "Number of seconds since 1970 of last garbage collection.", float64(ms.LastGC)/1e9),
		counter("go_memstats_mallocs_total", "Total number of heap objects allocated, both live and gc-ed.", b(ms.Mallocs)),
		gauge("go_memstats_mcache_inuse_bytes", "Number of bytes in use by mcache structures.", b(ms.MCacheInuse)),
		gauge("go_memstats_mcache_sys_bytes", "Number of bytes used for mcache structures obtained from system.", b(ms.MCacheSys)),
		gauge("go_memstats_mspan_inuse_bytes", "Number of bytes in use by mspan structures.", b(ms.MSpanInuse)),
		gauge("go_memstats_mspan_sys_bytes", "Number of bytes used for mspan structures obtained from system.", b(ms.MSpanSys)),
		gauge("go_memstats_next_gc_bytes", "Number of heap bytes when next garbage collection will take place.", b(ms.NextGC)),
		gauge("go_memstats_other_sys_bytes", "Number of bytes used for other system allocations.", b(ms.OtherSys)),
		gauge("go_memstats_stack_inuse_bytes", "Number of bytes obtained from system for stack allocator in non-CGO environments.", b(ms.StackInuse)),
		gauge("go_memstats_stack_sys_bytes", "Number of bytes obtained from system for stack allocator.", b(ms.StackSys)),
		gauge("go_memstats_sys_bytes", "Number of bytes obtained from system.", b(ms.Sys)),
	}
}

// processFamilies are the process_* series, read from /proc; one that
// cannot be read is left out.
func processFamilies() []family {
	var fams []family
	if st, err := procstat.Read("self"); err == nil {
		fams = append(fams,
			counter("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.", float64(st.UTime+st.STime)/procstat.TicksPerSecond),
			gauge("process_virtual_memory_bytes", "Virtual memory size in bytes.", float64(st.VSize)),
			gauge("process_resident_memory_bytes", "Resident memory size in bytes.", float64(st.RSS)*float64(os.Getpagesize())))
		if boot, err := bootTime(); err == nil {
			fams = append(fams, gauge("process_start_time_seconds", "Start time of the process since unix epoch in seconds.",
				float64(boot)+float64(st.Start)/procstat.TicksPerSecond))
		}
	}
	if fds, err := os.ReadDir("/proc/self/fd"); err == nil {
		fams = append(fams, gauge("process_open_fds", "Number of open file descriptors.", float64(len(fds))))
	}
	var lim unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &lim) == nil {
		fams = append(fams, gauge("process_max_fds", "Maximum number of open file descriptors.", float64(lim.Cur)))
	}
	if unix.Getrlimit(unix.RLIMIT_AS, &lim) == nil {
		fams = append(fams, gauge("process_virtual_memory_max_bytes", "Maximum amount of virtual memory available in bytes.", float64(lim.Cur)))
	}
	if rx, tx, err := netBytes(); err == nil {
		fams = append(fams,
			counter("process_network_receive_bytes_total", "Number of bytes received by the process over the network.", float64(rx)),
			counter("process_network_transmit_bytes_total", "Number of bytes sent by the process over the network.", float64(tx)))
	}
	return fams
}

// bootTime is when the machine booted (seconds since 1970, /proc/stat's
// btime): the base of a process's start time.
var bootTime = sync.OnceValues(func() (uint64, error) {
	b, err := sysfile.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "btime "); ok {
			return strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		}
	}
	return 0, os.ErrNotExist
})

// netBytes reads the IP bytes the process's network namespace received
// and sent (/proc/self/net/netstat, IpExt InOctets and OutOctets), as the
// Prometheus client library does.
func netBytes() (rx, tx uint64, err error) {
	b, err := sysfile.ReadFile("/proc/self/net/netstat")
	if err != nil {
		return 0, 0, err
	}
	var names []string
	for line := range strings.Lines(string(b)) {
		fields, ok := strings.CutPrefix(strings.TrimSpace(line), "IpExt:")
		if !ok {
			continue
		}
		if names == nil { // the first IpExt line names the columns, the second holds them
			names = strings.Fields(fields)
			continue
		}
		values := strings.Fields(fields)
		in, out := os.ErrNotExist, os.ErrNotExist
		for i, n := range names {
			switch {
			case i >= len(values):
			case n == "InOctets":
				rx, in = strconv.ParseUint(values[i], 10, 64)
			case n == "OutOctets":
				tx, out = strconv.ParseUint(values[i], 10, 64)
			}
		}
		if in != nil || out != nil {
			return 0, 0, fmt.Errorf("/proc/self/net/netstat: IpExt InOctets, OutOctets: %w", cmp.Or(in, out))
		}
		return rx, tx, nil
	}
	return 0, 0, fmt.Errorf("/proc/self/net/netstat: no IpExt: %w", os.ErrNotExist)
}

// dbFamilies are the go_sql_* series of a connection pool, db_name=name.
func dbFamilies(name string, st sql.DBStats) []family {
	db := label{"db_name", name}
	return []family{
		gauge("go_sql_max_open_connections", "Maximum number of open connections to the database.", float64(st.MaxOpenConnections), db),
		gauge("go_sql_open_connections", "The number of established connections both in use and idle.", float64(st.OpenConnections), db),
		gauge("go_sql_in_use_connections", "The number of connections currently in use.", float64(st.InUse), db),
		gauge("go_sql_idle_connections", "The number of idle connections.", float64(st.Idle), db),
		counter("go_sql_wait_count_total", "The total number of connections waited for.", float64(st.WaitCount), db),
		counter("go_sql_wait_duration_seconds_total", "The total time blocked waiting for a new connection.", st.WaitDuration.Seconds(), db),
		counter("go_sql_max_idle_closed_total", "The total number of connections closed due to SetMaxIdleConns.", float64(st.MaxIdleClosed), db),
		counter("go_sql_max_idle_time_closed_total", "The total number of connections closed due to SetConnMaxIdleTime.", float64(st.MaxIdleTimeClosed), db),
		counter("go_sql_max_lifetime_closed_total", "The total number of connections closed due to SetConnMaxLifetime.", float64(st.MaxLifetimeClosed), db),
	}
}
