package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"
)

// emitDags are the emission latency scenario's DAGs: a bash producer
// that emits -items events of emitted (one partition each) through the
// in-task CLI, 150-450 ms apart, and a consumer that runs once per event.
func emitDags(n int) string {
	return fmt.Sprintf(`dag_id: emit_producer
assets:
  - {name: emitted, uri: "bench://emitted"}
tasks:
  - task_id: produce
    operator: bash
    outlets: [emitted]
    bash_command: |
      for i in $(seq 1 %d); do
        weir assets emit --name emitted --partition-key "p$i" > /dev/null
        sleep 0.$(( RANDOM %% 300 + 150 ))
      done
---
dag_id: emit_consumer
schedule: [emitted]
asset_runs: per_event
max_active_runs: 64
assets:
  - {name: emitted, uri: "bench://emitted"}
tasks:
  - task_id: first
    operator: bash
    bash_command: "true"
`, n)
}

// emitLatency measures, for each event a running task emits through the
// Execution API, the time from the event's commit (its server timestamp,
// when the emission's call returns) to the start of the first task of the
// consumer run it created (p50, p99, max).
func emitLatency() error {
	d, err := newDeployment()
	if err != nil {
		return err
	}
	defer d.stop()
	if err := os.WriteFile(filepath.Join(d.dags, "emit.yaml"), []byte(emitDags(*items)), 0o600); err != nil {
		return err
	}
	if err := d.standalone(); err != nil {
		return err
	}
	if err := waitFor(time.Minute, "the DAGs", func() bool {
		var dag struct {
			DagID string `json:"dag_id"`
		}
		return d.get("/api/v2/dags/emit_consumer", &dag) == nil && d.get("/api/v2/dags/emit_producer", &dag) == nil
	}); err != nil {
		return err
	}
	if out, err := d.run("dags", "trigger", "emit_producer"); err != nil {
		return fmt.Errorf("trigger: %w: %s", err, out)
	}
	var st []stages
	err = waitFor(time.Duration(*items)*time.Second+2*time.Minute, "every event's run to start", func() bool {
		st, err = firstTaskStages(d, "emit_consumer", func(e consumedEvent) time.Time { return e.Timestamp })
		return err == nil && len(st) == *items
	})
	if err != nil {
		return fmt.Errorf("%w (%d of %d events measured)", err, len(st), *items)
	}
	lat := stageOf(st, stages.total)
	fmt.Printf("emit: %d events from a running task: event committed -> consumer's first task started p50 %s p99 %s max %s\n",
		len(lat), ms(pct(lat, 50)), ms(pct(lat, 99)), ms(lat[len(lat)-1]))
	for _, s := range []struct {
		name string
		of   func(stages) time.Duration
	}{{"event committed -> run created", func(s stages) time.Duration { return s.run }},
		{"run created -> first task queued", func(s stages) time.Duration { return s.queue }},
		{"task queued -> task started", func(s stages) time.Duration { return s.start }}} {
		d := stageOf(st, s.of)
		fmt.Printf("  %s: p50 %s p99 %s max %s\n", s.name, ms(pct(d, 50)), ms(pct(d, 99)), ms(d[len(d)-1]))
	}
	return nil
}

// stageOf returns one stage of every event's delay, sorted.
func stageOf(st []stages, of func(stages) time.Duration) []time.Duration {
	out := make([]time.Duration, len(st))
	for i, s := range st {
		out[i] = of(s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
