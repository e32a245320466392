package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/weirflow/weir/internal/core"
)

// BackfillStore holds backfills (docs/backfills.md) and the runs they made.
type BackfillStore interface {
	// BackfillCreate inserts a backfill row (not paused, not completed).
	BackfillCreate(ctx context.Context, p *BackfillCreateParams) (*core.Backfill, error)
	// BackfillDagRunInsert records one logical date of a backfill.
	BackfillDagRunInsert(ctx context.Context, r *core.BackfillDagRun) error
	// BackfillGet returns a backfill, or ErrNotFound.
	BackfillGet(ctx context.Context, id int64) (*core.Backfill, error)
	// BackfillList lists backfills (store.BackfillOrder); BackfillCount
	// counts them with the same filters.
	BackfillList(ctx context.Context, p *BackfillListParams) ([]core.Backfill, error)
	BackfillCount(ctx context.Context, p *BackfillListParams) (int, error)
	// BackfillSetPaused pauses or unpauses a backfill; ErrNotFound when
	// absent.
	BackfillSetPaused(ctx context.Context, id int64, paused bool, now time.Time) error
	// BackfillComplete sets a backfill's completed_at unless set; false
	// when it was already completed.
	BackfillComplete(ctx context.Context, id int64, now time.Time) (bool, error)
	// BackfillFailQueued moves every queued run of a backfill to failed
	// and returns how many it moved.
	BackfillFailQueued(ctx context.Context, id int64, now time.Time) (int, error)
	// DagRunJoinBackfill makes an existing run one of a backfill's: its
	// backfill_id is set and its run_type becomes backfill.
	DagRunJoinBackfill(ctx context.Context, runID, backfillID int64) error
}

// BackfillCreateParams describes a new backfill.
type BackfillCreateParams struct {
	DagID             string
	FromDate, ToDate  time.Time
	DagRunConf        json.RawMessage
	ReprocessBehavior core.ReprocessBehavior
	MaxActiveRuns     int
	Now               time.Time
}

// BackfillListParams filters and pages BackfillList.
type BackfillListParams struct {
	DagID string // "" = every DAG
	// OnlyActive keeps the backfills not completed yet.
	OnlyActive bool
	Page
}

// BackfillOrder is how backfills may be ordered.
var BackfillOrder = Order{List: "backfills", Default: "id (oldest first)",
	Fields: []string{"id", "dag_id", "from_date", "to_date", "created_at", "completed_at", "updated_at"}}
