package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/weirflow/weir"
)

// streamBatchesDAG is a streaming operator with a batch handler
// (docs/streaming.md#streaming-operators): load's command trigger prints
// 100 events, ten at a time, and its handler inserts the events committed
// since its previous call into SQLite in one transaction per batch. With
// conf {"fail_at": n} the first try fails on the batch holding event n,
// and the retry calls the handler again from that batch's first event:
// each row records the try and the first event of the batch that wrote
// it, and the primary key refuses an event handled twice.
func streamBatchesDAG() *weir.DAG {
	dag := weir.NewDAG("go_stream_batches",
		weir.Description("Inserts a stream's events into SQLite, one transaction per batch of events committed since the last."),
		weir.Tags("example", "go", "streaming"),
		weir.Params(map[string]any{"db": filepath.Join(os.TempDir(), "weir-stream-batches.db"), "fail_at": 0}),
	)
	events, err := weir.NewTrigger("command", map[string]any{"command": `for i in $(seq $((WEIR_STREAM_LAST_INDEX + 1)) 99); do
  echo "{\"n\": $((i + 1))}"
  if [ $((i % 10)) = 9 ]; then sleep 0.05; fi
done`})
	if err != nil {
		panic(err) // a literal the type accepts
	}
	dag.Sensor("load", events, weir.HandleStreamBatch(func(ctx context.Context, tc *weir.TaskContext, evs []weir.StreamEvent) error {
		failAt, err := weir.ParamAs[int](tc, "fail_at")
		if err != nil {
			return err
		}
		first := evs[0].SequenceIndex
		tc.Logger.Info("handling a batch", "first", first, "last", evs[len(evs)-1].SequenceIndex)
		rows := make([][3]int64, len(evs))
		for i, ev := range evs {
			var e struct{ N int }
			if err := ev.Decode(&e); err != nil {
				return err
			}
			if e.N == failAt && tc.TryNumber == 1 {
				return fmt.Errorf("cannot insert event %d (fail_at); the retry starts again at event %d", e.N, first+1)
			}
			rows[i] = [3]int64{ev.SequenceIndex, int64(e.N), first}
		}
		return insertBatch(ctx, tc, rows)
	}), weir.Retries(1), weir.RetryDelay(time.Second))
	return dag
}

// insertBatch writes rows (sequence index, n, the batch's first sequence
// index) into the table batch_events in one transaction.
func insertBatch(ctx context.Context, tc *weir.TaskContext, rows [][3]int64) error {
	path, ok := tc.Params["db"].(string)
	if !ok || path == "" {
		return errors.New("param db must name a SQLite file")
	}
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		return err
	}
	defer func() { _ = db.Close() }()
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS batch_events
		(seq INTEGER PRIMARY KEY, n INTEGER NOT NULL, try INTEGER NOT NULL, batch_first INTEGER NOT NULL)`); err != nil {
		return err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	for _, r := range rows {
		if _, err := tx.ExecContext(ctx, "INSERT INTO batch_events (seq, n, try, batch_first) VALUES ($1, $2, $3, $4)",
			r[0], r[1], tc.TryNumber, r[2]); err != nil {
			return fmt.Errorf("insert the event with sequence index %d: %w", r[0], err)
		}
	}
	return tx.Commit()
}
