package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/weirflow/weir/internal/core"
)

// WatcherStore holds asset watchers (docs/watchers.md): their rows are
// written by AssetSync from the DAGs that declare them; the triggerer runs
// their triggers and commits what they find here.
type WatcherStore interface {
	// WatcherList lists watchers by asset name, then watcher name, with
	// their trigger's triggerer, committed cursor and health.
	WatcherList(ctx context.Context, p *WatcherListParams) ([]core.Watcher, error)
	// WatcherCommit records p's events (queued for the DAGs scheduled on
	// their assets) and writes p's cursors and state, in one transaction behind the
	// trigger's hold: all of it or nothing. ErrConflict, with nothing
	// written, when p.TriggererID no longer owns the trigger, a watcher is
	// no longer run by it, or a cursor is not at the version the poll read
	// (someone set it meanwhile). Returns the cursors' new versions, in
	// p.Cursors' order, and the events' ids.
	WatcherCommit(ctx context.Context, p *WatcherCommitParams) (*WatcherCommitResult, error)
	// WatcherReportPolls records the outcome of polls in the health of the
	// watchers of each poll's trigger.
	WatcherReportPolls(ctx context.Context, polls []WatcherPoll) error
	// WatcherAttachTriggers gives a trigger row to every watcher of an
	// active DAG on an active asset that has none (a row with the same type
	// and kwargs when a watcher has one, so that they share a poll loop),
	// and returns how many it attached. Triggers no try and no such
	// watcher uses are what TriggerDeleteUnused deletes.
	WatcherAttachTriggers(ctx context.Context, now time.Time) (int, error)
}

// WatcherListParams filters WatcherList.
type WatcherListParams struct {
	AssetID   int64 // 0 = any
	TriggerID int64 // 0 = any
	// TriggererID keeps the watchers whose trigger this triggerer runs.
	TriggererID string
	// Running keeps only watchers that run: declared by an active DAG on
	// an active asset.
	Running bool
}

// WatcherCommitParams is what one poll of a watcher trigger commits.
type WatcherCommitParams struct {
	TriggerID   int64
	TriggererID string
	Events      []WatcherEvent
	Cursors     []WatcherCursor
	// State are other asset-state keys the watcher writes (a nil Value
	// deletes the key).
	State []WatcherCursor
	Now   time.Time
}

// WatcherEvent is one event a watcher found for its asset.
type WatcherEvent struct {
	AssetID      int64
	Watcher      string
	Extra        json.RawMessage // a JSON object
	PartitionKey *string
}

// WatcherCursor is a watcher's new cursor; Version is the version of the
// cursor the poll started from (0 = it had none). In
// WatcherCommitParams.State it is a state key's value instead (Key set,
// Version unused).
type WatcherCursor struct {
	AssetID int64
	Watcher string
	Key     string
	Value   json.RawMessage
	Version int64
}

// WatcherCommitResult is what a commit wrote.
type WatcherCommitResult struct {
	EventIDs []int64
	Versions []int64 // the new cursor versions, in the params' order
}

// WatcherPoll is the outcome of one poll of a watcher trigger.
type WatcherPoll struct {
	TriggerID int64
	At        time.Time
	Duration  time.Duration
	// Err is the latest error of the polls this report covers ("" = none
	// failed) and ErrAt when that poll began (zero: At); ErrorsInRow counts
	// the polls in a row that failed, up to this one.
	Err         string
	ErrAt       time.Time
	ErrorsInRow int
}
