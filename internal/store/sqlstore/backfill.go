package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// The backfill queries (docs/backfills.md).
const (
	backfillCols = `id, dag_id, from_date, to_date, dag_run_conf, is_paused, reprocess_behavior,
		max_active_runs, created_at, completed_at, updated_at`
	qBackfillInsert = `INSERT INTO backfill (dag_id, from_date, to_date, dag_run_conf, is_paused,
		reprocess_behavior, max_active_runs, created_at, updated_at)
		VALUES ($1, $2, $3, $4, FALSE, $5, $6, $7, $7) RETURNING id`
	qBackfillGet       = `SELECT ` + backfillCols + ` FROM backfill WHERE id = $1`
	qBackfillList      = `SELECT ` + backfillCols + ` FROM backfill%s%s%s`
	qBackfillCount     = `SELECT COUNT(*) FROM backfill%s`
	qBackfillSetPaused = `UPDATE backfill SET is_paused = $2, updated_at = $3 WHERE id = $1`
	qBackfillComplete  = `UPDATE backfill SET completed_at = $2, updated_at = $2
		WHERE id = $1 AND completed_at IS NULL`
	qBackfillFailQueued = `UPDATE dag_run SET state = 'failed', end_date = $2
		WHERE backfill_id = $1 AND state = 'queued'`
	qBackfillDagRunInsert = `INSERT INTO backfill_dag_run (backfill_id, dag_run_id, exception_reason,
		logical_date, sort_ordinal) VALUES ($1, $2, $3, $4, $5)`
	qDagRunJoinBackfill = `UPDATE dag_run SET backfill_id = $2, run_type = 'backfill' WHERE id = $1`
)

var backfillOrder = orderSpec{order: store.BackfillOrder, def: "id", key: []string{"id"},
	cols: map[string]string{"id": "id", "dag_id": "dag_id", "from_date": "from_date", "to_date": "to_date",
		"created_at": "created_at", "completed_at": "completed_at", "updated_at": "updated_at"},
	nullable: []string{"completed_at"}}

// BackfillCreate inserts a backfill row.
func (s *Store) BackfillCreate(ctx context.Context, p *store.BackfillCreateParams) (*core.Backfill, error) {
	now := p.Now.UTC().Truncate(time.Microsecond)
	b := &core.Backfill{DagID: p.DagID, FromDate: p.FromDate.UTC().Truncate(time.Microsecond),
		ToDate: p.ToDate.UTC().Truncate(time.Microsecond), DagRunConf: p.DagRunConf,
		ReprocessBehavior: p.ReprocessBehavior, MaxActiveRuns: p.MaxActiveRuns, CreatedAt: now, UpdatedAt: now}
	if len(b.DagRunConf) == 0 {
		b.DagRunConf = []byte(`{}`)
	}
	err := s.writer().QueryRowContext(ctx, qBackfillInsert, p.DagID, micros(b.FromDate), micros(b.ToDate),
		string(b.DagRunConf), string(p.ReprocessBehavior), p.MaxActiveRuns, micros(now)).Scan(&b.ID)
	if err != nil {
		return nil, s.wrap(err, "create backfill of dag %s", p.DagID)
	}
	return b, nil
}

// BackfillDagRunInsert records one logical date of a backfill.
func (s *Store) BackfillDagRunInsert(ctx context.Context, r *core.BackfillDagRun) error {
	var reason any
	if r.ExceptionReason != "" {
		reason = r.ExceptionReason
	}
	var runID any
	if r.DagRunID != nil {
		runID = *r.DagRunID
	}
	_, err := s.writer().ExecContext(ctx, qBackfillDagRunInsert, r.BackfillID, runID, reason,
		micros(r.LogicalDate), r.SortOrdinal)
	return s.wrap(err, "record logical date %s of backfill %d", r.LogicalDate.UTC().Format(time.RFC3339), r.BackfillID)
}

// BackfillGet returns a backfill by id.
func (s *Store) BackfillGet(ctx context.Context, id int64) (*core.Backfill, error) {
	b, err := scanBackfill(s.reader().QueryRowContext(ctx, qBackfillGet, id))
	if err != nil {
		return nil, s.wrap(err, "get backfill %d", id)
	}
	return b, nil
}

// BackfillList lists a page of backfills.
func (s *Store) BackfillList(ctx context.Context, p *store.BackfillListParams) ([]core.Backfill, error) {
	return listPage(ctx, s, "list backfills", qBackfillList, backfillFilter(p), &backfillOrder, p.Page, scanBackfill)
}

// BackfillCount counts the backfills BackfillList would list without paging.
func (s *Store) BackfillCount(ctx context.Context, p *store.BackfillListParams) (int, error) {
	return s.count(ctx, "count backfills", qBackfillCount, backfillFilter(p))
}

func backfillFilter(p *store.BackfillListParams) *builder {
	var b builder
	if p.DagID != "" {
		b.where("dag_id = ?", p.DagID)
	}
	if p.OnlyActive {
		b.where("completed_at IS NULL")
	}
	return &b
}

// BackfillSetPaused pauses or unpauses a backfill.
func (s *Store) BackfillSetPaused(ctx context.Context, id int64, paused bool, now time.Time) error {
	return s.execOne(ctx, fmt.Sprintf("set paused of backfill %d", id), qBackfillSetPaused, id, paused, micros(now))
}

// BackfillComplete sets completed_at once.
func (s *Store) BackfillComplete(ctx context.Context, id int64, now time.Time) (bool, error) {
	res, err := s.writer().ExecContext(ctx, qBackfillComplete, id, micros(now))
	if err != nil {
		return false, s.wrap(err, "complete backfill %d", id)
	}
	n, err := res.RowsAffected()
	return n > 0, s.wrap(err, "complete backfill %d", id)
}

// BackfillFailQueued fails the queued runs of a backfill.
func (s *Store) BackfillFailQueued(ctx context.Context, id int64, now time.Time) (int, error) {
	res, err := s.writer().ExecContext(ctx, qBackfillFailQueued, id, micros(now))
	if err != nil {
		return 0, s.wrap(err, "fail queued runs of backfill %d", id)
	}
	n, err := res.RowsAffected()
	return int(n), s.wrap(err, "fail queued runs of backfill %d", id)
}

// DagRunJoinBackfill makes a run one of a backfill's.
func (s *Store) DagRunJoinBackfill(ctx context.Context, runID, backfillID int64) error {
	return s.execOne(ctx, fmt.Sprintf("join dag run %d to backfill %d", runID, backfillID), qDagRunJoinBackfill, runID, backfillID)
}

func scanBackfill(r scanner) (*core.Backfill, error) {
	var (
		b                          core.Backfill
		from, to, created, updated int64
		completed                  sql.NullInt64
		conf, reprocess            string
	)
	if err := r.Scan(&b.ID, &b.DagID, &from, &to, &conf, &b.IsPaused, &reprocess, &b.MaxActiveRuns,
		&created, &completed, &updated); err != nil {
		return nil, err
	}
	b.FromDate, b.ToDate = fromMicros(from), fromMicros(to)
	b.DagRunConf = []byte(conf)
	b.ReprocessBehavior = core.ReprocessBehavior(reprocess)
	b.CreatedAt, b.UpdatedAt, b.CompletedAt = fromMicros(created), fromMicros(updated), ptrMicros(completed)
	return &b, nil
}
