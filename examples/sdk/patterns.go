package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/weirflow/weir"
)

// checkpointDAG is intra-task checkpointing (docs/task-state.md): ingest
// loads 10 pages and records the last one after each page. Try 1 fails
// after page 7 (70 %); try 2 reads the checkpoint and loads pages 8-10 only.
// The YAML version is examples/dags/checkpoint_resume.yaml.
func checkpointDAG() *weir.DAG {
	dag := weir.NewDAG("go_checkpoint_resume",
		weir.Description("ingest fails at 70 % on try 1; try 2 resumes from its task-state checkpoint."),
		weir.Tags("example", "go", "task-state"))
	dag.Go("ingest", func(ctx context.Context, tc *weir.TaskContext) (any, error) {
		last, _, err := weir.GetState[int](ctx, tc, "last_page")
		if err != nil {
			return nil, err
		}
		tc.Logger.Info("resuming", "after_page", last)
		var loaded []int
		for page := last + 1; page <= 10; page++ {
			if tc.TryNumber == 1 && page == 8 {
				return nil, fmt.Errorf("worker lost at 70 %% (page %d)", page)
			}
			loaded = append(loaded, page) // load the page here
			if err := tc.TaskState().Set(ctx, "last_page", page); err != nil {
				return nil, err
			}
		}
		return map[string]any{"try": tc.TryNumber, "resumed_after": last, "pages_loaded": loaded}, nil
	}, weir.Retries(1), weir.RetryDelay(time.Second))
	return dag
}

// progressDAG reports {"done": n, "total": m} in task state after each item,
// readable over the REST API and with `weir state-store get` while the task
// runs. With the param pause_file set, the task waits half way until that
// file exists, so a demo or a test can read the progress mid-run. The YAML
// version is examples/dags/progress_report.yaml.
func progressDAG() *weir.DAG {
	dag := weir.NewDAG("go_progress_report",
		weir.Description("Reports {done, total} in task state while it works through its items."),
		weir.Tags("example", "go", "task-state"),
		weir.Params(map[string]any{"total": 6, "pause_file": ""}))
	dag.Go("process_items", func(ctx context.Context, tc *weir.TaskContext) (any, error) {
		total, err := weir.ParamAs[int](tc, "total")
		if err != nil {
			return nil, err
		}
		pause, err := weir.ParamAs[string](tc, "pause_file")
		if err != nil {
			return nil, err
		}
		report := func(done int) error {
			return tc.TaskState().Set(ctx, "progress", map[string]int{"done": done, "total": total}, 7*24*time.Hour)
		}
		if err := report(0); err != nil {
			return nil, err
		}
		for done := 1; done <= total; done++ {
			tc.Logger.Info("processed item", "item", done, "total", total) // the work goes here
			if err := report(done); err != nil {
				return nil, err
			}
			if pause != "" && done == total/2 {
				tc.Logger.Info("pausing", "done", done, "total", total, "until", pause)
				if err := waitForFile(ctx, pause); err != nil {
					return nil, err
				}
			}
		}
		return total, nil
	})
	return dag
}

// waitForFile returns once path exists, or when ctx ends.
func waitForFile(ctx context.Context, path string) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		_, err := os.Stat(path)
		if err == nil {
			return nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("wait for %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for %s: %w", path, ctx.Err())
		case <-tick.C:
		}
	}
}
