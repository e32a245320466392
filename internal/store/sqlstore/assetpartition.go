package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// SQL of partitioned asset-triggered runs (docs/emission.md#consumers): a
// DAG whose asset_runs is set queues each event in asset_event_queue
// instead of widening a range in asset_dag_run_queue.
const (
	qDagSetAssetRuns = `UPDATE dag SET asset_runs = $2 WHERE dag_id = $1`
	// qAssetEventQueueEnqueue queues event $2 of asset $1 (partition key
	// $4, '' for none) for every active partitioned DAG scheduled on the
	// asset or on an alias that resolves to it.
	qAssetEventQueueEnqueue = `INSERT INTO asset_event_queue (target_dag_id, event_id, asset_id, partition_key, created_at)
		SELECT c.dag_id, CAST($2 AS BIGINT), CAST($1 AS BIGINT), CAST($4 AS TEXT), CAST($3 AS BIGINT) FROM (` + qConsumersOfAsset + `) c JOIN dag d ON d.dag_id = c.dag_id
		WHERE d.is_active = TRUE AND d.asset_runs IS NOT NULL`
	qAssetEventQueuePrune = `DELETE FROM asset_event_queue WHERE target_dag_id = $1
		AND asset_id NOT IN (` + qScheduledAssetsOf + `)`
	// qAssetQueueToEvents turns a DAG's queued ranges into queued events
	// (a DAG that became partitioned keeps what was queued).
	qAssetQueueToEvents = `INSERT INTO asset_event_queue (target_dag_id, event_id, asset_id, partition_key, created_at)
		SELECT q.target_dag_id, e.id, e.asset_id, COALESCE(e.partition_key, ''), q.created_at
		FROM asset_dag_run_queue q JOIN asset_event e ON e.asset_id = q.asset_id
			AND e.id >= q.first_event_id AND e.id <= q.event_id
		WHERE q.target_dag_id = $1
		ON CONFLICT (target_dag_id, event_id) DO NOTHING`
	qAssetQueueClear = `DELETE FROM asset_dag_run_queue WHERE target_dag_id = $1`
	// qAssetEventsToQueue turns a DAG's queued events into ranges (a DAG
	// that coalesces again).
	qAssetEventsToQueue = `INSERT INTO asset_dag_run_queue (asset_id, target_dag_id, first_event_id, event_id, created_at)
		SELECT asset_id, target_dag_id, MIN(event_id), MAX(event_id), MIN(created_at)
		FROM asset_event_queue WHERE target_dag_id = $1 GROUP BY asset_id, target_dag_id ` + qWidenQueueRange
	qAssetEventQueueClear = `DELETE FROM asset_event_queue WHERE target_dag_id = $1`
	// qAssetPartitionQueued lists the oldest $1 queued events of active,
	// unpaused partitioned DAGs.
	qAssetPartitionQueued = `SELECT q.target_dag_id, d.asset_runs, q.partition_key, q.asset_id, q.event_id
		FROM asset_event_queue q JOIN dag d ON d.dag_id = q.target_dag_id
		WHERE d.is_active = TRUE AND d.is_paused = FALSE AND d.asset_runs IS NOT NULL
		ORDER BY q.event_id, q.target_dag_id LIMIT $1`
	// qAssetPartitionTake and qAssetEventTake remove a group's queued
	// events of the assets the DAG is scheduled on.
	qAssetPartitionTake = `DELETE FROM asset_event_queue WHERE target_dag_id = $1 AND partition_key = $2
		AND asset_id IN (` + qScheduledAssetsOf + `) RETURNING asset_id, event_id`
	qAssetEventTake = `DELETE FROM asset_event_queue WHERE target_dag_id = $1 AND event_id = $2
		AND asset_id IN (` + qScheduledAssetsOf + `) RETURNING asset_id, event_id`
	qRunConsumesEvent = `INSERT INTO dag_run_asset_event (dag_run_id, event_id) VALUES ($1, $2)`
)

// syncAssetRuns records how a DAG turns its events into runs (in
// AssetSync's transaction) and moves what is queued for it to the queue
// its mode reads, so a DAG that changes mode loses no event.
func (s *Store) syncAssetRuns(ctx context.Context, d *core.DAG) error {
	var mode any
	steps := []string{qAssetEventsToQueue, qAssetEventQueueClear}
	if d.AssetRuns.Partitioned() {
		mode = string(d.AssetRuns)
		steps = []string{qAssetQueueToEvents, qAssetQueueClear, qAssetEventQueuePrune}
	}
	if _, err := s.tx.ExecContext(ctx, qDagSetAssetRuns, d.DagID, mode); err != nil {
		return s.wrap(err, "sync assets of dag %s: record asset_runs", d.DagID)
	}
	for _, q := range steps {
		if _, err := s.tx.ExecContext(ctx, q, d.DagID); err != nil {
			return s.wrap(err, "sync assets of dag %s: move queued events to the %s queue", d.DagID, d.AssetRuns)
		}
	}
	return nil
}

// enqueueEvent queues a new event for its consumers (in its transaction):
// a range widened for coalescing DAGs, a row for partitioned ones.
func (s *Store) enqueueEvent(ctx context.Context, assetID, eventID int64, p *store.AssetEventParams) error {
	if err := s.enqueueRange(ctx, assetID, eventID, eventID, p.Now); err != nil {
		return err
	}
	_, err := s.enqueuePartitioned(ctx, assetID, eventID, p)
	return err
}

// enqueueRange queues events first..last of asset assetID for its
// coalescing consumers, widening the range already queued.
func (s *Store) enqueueRange(ctx context.Context, assetID, first, last int64, now time.Time) error {
	if _, err := s.writer().ExecContext(ctx, qAssetQueueEnqueue, assetID, first, last, micros(now)); err != nil {
		return s.wrap(err, "record event of asset %d: queue for consumers", assetID)
	}
	return nil
}

// enqueuePartitioned queues event eventID of asset assetID for its
// partitioned consumers and returns how many it was queued for.
func (s *Store) enqueuePartitioned(ctx context.Context, assetID, eventID int64, p *store.AssetEventParams) (int64, error) {
	key := ""
	if p.PartitionKey != nil {
		key = *p.PartitionKey
	}
	res, err := s.writer().ExecContext(ctx, qAssetEventQueueEnqueue, assetID, eventID, micros(p.Now), key)
	if err != nil {
		return 0, s.wrap(err, "record event of asset %d: queue for partitioned consumers", assetID)
	}
	n, err := res.RowsAffected()
	return n, s.wrap(err, "record event of asset %d: queue for partitioned consumers", assetID)
}

// queuedEvent is one row of asset_event_queue.
type queuedEvent struct {
	group   store.AssetRunGroup
	assetID int64
}

// AssetPartitionReady returns the groups of queued events that meet their
// partitioned DAG's schedule, oldest first.
func (s *Store) AssetPartitionReady(ctx context.Context, limit int) ([]store.AssetRunGroup, error) {
	const what = "list partitioned dags ready for asset-triggered runs"
	rows, err := s.reader().QueryContext(ctx, qAssetPartitionQueued, limit)
	if err != nil {
		return nil, s.wrap(err, what)
	}
	queued, err := collect(rows, func(r *sql.Rows) (queuedEvent, error) {
		var (
			q    queuedEvent
			mode string
		)
		err := r.Scan(&q.group.DagID, &mode, &q.group.PartitionKey, &q.assetID, &q.group.EventID)
		q.group.Mode = core.AssetRunMode(mode)
		return q, err
	})
	if err != nil {
		return nil, s.wrap(err, what)
	}
	var (
		order  []store.AssetRunGroup               // groups by their oldest event
		assets = map[store.AssetRunGroup][]int64{} // a group (EventID 0 per partition) → its assets
	)
	for _, q := range queued {
		k := q.group
		if k.Mode == core.AssetRunsPerPartition {
			k.EventID = 0
		}
		if _, seen := assets[k]; !seen {
			order = append(order, q.group)
		}
		if !slices.Contains(assets[k], q.assetID) {
			assets[k] = append(assets[k], q.assetID)
		}
	}
	met := map[string]bool{} // dag id and asset set → whether they meet the schedule
	var ready []store.AssetRunGroup
	for _, g := range order {
		k := g
		if k.Mode == core.AssetRunsPerPartition {
			k.EventID = 0
		}
		ids := assets[k]
		slices.Sort(ids)
		memo := g.DagID + "\x00" + joinIDs(ids)
		ok, seen := met[memo]
		if !seen {
			if ok, _, err = s.scheduleSatisfied(ctx, g.DagID, entriesOf(ids)); err != nil {
				return nil, fmt.Errorf("%s: %w", what, err)
			}
			met[memo] = ok
		}
		if ok {
			ready = append(ready, g)
		}
	}
	return ready, nil
}

// AssetPartitionConsume takes a group's queued events for a run.
func (s *Store) AssetPartitionConsume(ctx context.Context, g *store.AssetRunGroup, dagRunID int64) ([]core.AssetEvent, error) {
	what := fmt.Sprintf("consume queued asset events of dag %s (partition %q) for run %d", g.DagID, g.PartitionKey, dagRunID)
	var events []core.AssetEvent
	err := s.inTx(ctx, func(tx *Store) error {
		query, args := qAssetPartitionTake, []any{g.DagID, g.PartitionKey}
		if g.Mode == core.AssetRunsPerEvent {
			query, args = qAssetEventTake, []any{g.DagID, g.EventID}
		}
		rows, err := tx.tx.QueryContext(ctx, query, args...)
		if err != nil {
			return tx.wrap(err, "%s", what)
		}
		taken, err := collect(rows, func(r *sql.Rows) ([2]int64, error) {
			var t [2]int64
			return t, r.Scan(&t[0], &t[1])
		})
		if err != nil {
			return tx.wrap(err, "%s", what)
		}
		var ids []int64
		for _, t := range taken {
			if !slices.Contains(ids, t[0]) {
				ids = append(ids, t[0])
			}
		}
		consumed := make([][]any, len(taken))
		for i, t := range taken {
			consumed[i] = []any{dagRunID, t[1]}
		}
		events, err = tx.consume(ctx, g.DagID, dagRunID, entriesOf(ids), what, qRunConsumesEvent, consumed)
		return err
	})
	if err != nil {
		return nil, err
	}
	return events, nil
}

// entriesOf returns queue entries naming assets ids, which is all
// scheduleSatisfied reads of them.
func entriesOf(ids []int64) []store.AssetQueueEntry {
	out := make([]store.AssetQueueEntry, len(ids))
	for i, id := range ids {
		out[i].AssetID = id
	}
	return out
}

// joinIDs writes ids as "1,2,3".
func joinIDs(ids []int64) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strconv.FormatInt(id, 10)
	}
	return strings.Join(parts, ",")
}
