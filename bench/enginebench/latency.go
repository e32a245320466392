package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/weirflow/weir/internal/operator"
)

// The deferral scenarios' latencies: the child's resumed steps append one
// line per task ("task_id microseconds") to the file the driver names, and
// the driver reads them back once the run ended.

// latencyLog appends one line per resumed task to the file the driver
// named.
type latencyLog struct {
	mu sync.Mutex
	f  *os.File
}

func (l *latencyLog) record(taskID string, d time.Duration) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, err := fmt.Fprintf(l.f, "%s %d\n", taskID, d.Microseconds())
	return err
}

// since returns a resumed step that records now − the time under key in
// the JSON object of its resume that from picks (the event, or the next
// kwargs).
func (l *latencyLog) since(key string, from func(*operator.Resume) json.RawMessage) operator.GoFunc {
	return func(_ context.Context, tc operator.TaskContext) (any, error) {
		now := time.Now()
		var v map[string]time.Time
		if tc.Resume == nil || json.Unmarshal(from(tc.Resume), &v) != nil || v[key].IsZero() {
			return nil, fmt.Errorf("task %s resumed without a time under %q", tc.TaskID, key)
		}
		return nil, l.record(tc.TaskID, now.Sub(v[key]))
	}
}

// latencies summarizes the recorded latencies of one repetition.
type latencies struct {
	p50, p90, p99, max time.Duration
}

// readLatencies reads the latency file the child's tasks appended to; it
// must have one line per task.
func readLatencies(path string, n int) (latencies, error) {
	f, err := os.Open(path) //nolint:gosec // the driver's own temporary file
	if err != nil {
		return latencies{}, err
	}
	defer f.Close()
	var ds []time.Duration
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		_, v, _ := strings.Cut(sc.Text(), " ")
		us, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return latencies{}, fmt.Errorf("latency file %s: line %d: %q", path, len(ds)+1, sc.Text())
		}
		ds = append(ds, time.Duration(us)*time.Microsecond)
	}
	if err := sc.Err(); err != nil {
		return latencies{}, err
	}
	if len(ds) != n {
		return latencies{}, fmt.Errorf("latency file %s has %d lines, want one per task (%d)", path, len(ds), n)
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return latencies{p50: ds[n/2], p90: ds[n*9/10], p99: ds[n*99/100], max: ds[n-1]}, nil
}
