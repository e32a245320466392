package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/weirflow/weir/internal/core"
)

// AssetStore holds assets, their events and the queue of events waiting for
// asset-triggered runs (docs/assets.md).
type AssetStore interface {
	// AssetSync records the assets a DAG version defines (by name: created,
	// or their uri, group and extra updated), its outlet aliases, which
	// assets the DAG is scheduled on and each task's concrete inlets and
	// outlets, replacing what the DAG recorded before. Queued events of
	// assets the DAG is no longer scheduled on are dropped. Assets no DAG
	// defines any more become inactive. ErrConflict when an asset's name or
	// uri is already defined differently by another active DAG.
	AssetSync(ctx context.Context, p *AssetSyncParams) error
	// AssetDeactivateOrphans marks inactive (since now) every active asset
	// that no active DAG defines, and returns how many it marked.
	AssetDeactivateOrphans(ctx context.Context, now time.Time) (int, error)
	// AssetGet returns an asset with the DAGs scheduled on it and the tasks
	// that produce and consume it; ErrNotFound when absent.
	AssetGet(ctx context.Context, id int64) (*core.AssetModel, error)
	AssetGetByName(ctx context.Context, name string) (*core.AssetModel, error)
	AssetGetByURI(ctx context.Context, uri string) (*core.AssetModel, error)
	// AssetList lists assets (store.AssetOrder, by name by default);
	// AssetCount counts them with the same filters.
	AssetList(ctx context.Context, p *AssetListParams) ([]core.AssetModel, error)
	AssetCount(ctx context.Context, p *AssetListParams) (int, error)

	// AssetEventInsert records an event and, in the same transaction,
	// queues it for every active DAG scheduled on the asset. Called outside
	// a transaction, it also wakes the scheduler (ChannelScheduler) with
	// the commit; inside one, notifying is the caller's.
	AssetEventInsert(ctx context.Context, p *AssetEventParams) (*core.AssetEvent, error)
	// AssetEventList lists events (store.AssetEventOrder, oldest first by
	// default); AssetEventCount counts them with the same filters (the
	// cursor aside).
	AssetEventList(ctx context.Context, p *AssetEventListParams) ([]core.AssetEvent, error)
	AssetEventCount(ctx context.Context, p *AssetEventListParams) (int, error)
	// AssetEventGetByIdempotencyKey returns the event of asset assetID
	// recorded with the idempotency key (a key names one event of its
	// asset); ErrNotFound when none was.
	AssetEventGetByIdempotencyKey(ctx context.Context, assetID int64, key string) (*core.AssetEvent, error)
	// AssetLinks returns, in one query, how active DAGs use each of the
	// assets: the tasks that produce (outlets) and read (inlets) them and
	// the DAGs scheduled on them, ordered by asset, kind, DAG and task (the
	// web UI's asset graph).
	AssetLinks(ctx context.Context, assetIDs []int64) ([]AssetLink, error)
	// AssetEventRuns returns the runs each of the events created (the runs
	// that consumed them), by event then run, in one query.
	AssetEventRuns(ctx context.Context, eventIDs []int64) ([]EventRun, error)

	// AssetQueueReady returns the active, unpaused DAGs every one of whose
	// scheduled assets has a queued event, by dag id.
	AssetQueueReady(ctx context.Context) ([]string, error)
	// AssetQueueList returns a DAG's queued entries by asset name.
	AssetQueueList(ctx context.Context, dagID string) ([]AssetQueueEntry, error)
	// AssetQueueFind returns the queued entries of p's DAG and/or asset
	// (at least one given), queued before p.Before when set, by DAG then
	// asset name: one per DAG and asset, whether the DAG coalesces its
	// events or runs per partition or per event.
	AssetQueueFind(ctx context.Context, p *AssetQueueParams) ([]AssetQueueEntry, error)
	// AssetQueueClear removes what AssetQueueFind would find, from both
	// queues, and returns how many queue rows went (an entry of a
	// coalescing DAG, an event of a per-partition or per-event one).
	AssetQueueClear(ctx context.Context, p *AssetQueueParams) (int, error)
	// AssetQueueConsume removes every queued entry of the DAG and records
	// their events as consumed by the run. ErrConflict (and nothing
	// consumed) when not every scheduled asset had an entry: another
	// scheduler consumed them first. Call it in the run's transaction.
	AssetQueueConsume(ctx context.Context, dagID string, dagRunID int64) ([]core.AssetEvent, error)
	// AssetEventsOfRun returns the events a run consumed, oldest first.
	AssetEventsOfRun(ctx context.Context, dagRunID int64) ([]core.AssetEvent, error)

	// AssetPartitionReady returns the groups of queued events of
	// partitioned DAGs (core.AssetRunMode: per partition key, or per
	// event) that meet their DAG's schedule on their own, oldest first,
	// looking at the oldest limit queued events of active, unpaused DAGs.
	AssetPartitionReady(ctx context.Context, limit int) ([]AssetRunGroup, error)
	// AssetPartitionConsume removes a group's queued events and records
	// them as consumed by the run. ErrConflict (and nothing consumed) when
	// they no longer meet the schedule: another scheduler consumed them
	// first. Call it in the run's transaction.
	AssetPartitionConsume(ctx context.Context, g *AssetRunGroup, dagRunID int64) ([]core.AssetEvent, error)
}

// AssetRunGroup is the queued events of a partitioned DAG that make one
// run: those with one partition key, or one event.
type AssetRunGroup struct {
	DagID string
	Mode  core.AssetRunMode
	// PartitionKey is the events' key ("" = the events without one).
	PartitionKey string
	// EventID is the group's event (per_event), or its oldest event
	// (per_partition).
	EventID int64
}

// AssetSyncParams is one parsed DAG version's use of assets.
type AssetSyncParams struct {
	Spec *core.DAG
	Now  time.Time
}

// AssetListParams filters AssetList and AssetCount.
type AssetListParams struct {
	NamePattern string // SQL LIKE pattern on the name ("" = any)
	URIPattern  string // SQL LIKE pattern on the uri ("" = any)
	Active      *bool  // nil = both
	Page
}

// AssetEventParams describes a new event. The asset is AssetID, or when 0
// the asset named AssetName.
type AssetEventParams struct {
	AssetID       int64
	AssetName     string
	Extra         json.RawMessage // a JSON object; nil = {}
	PartitionKey  *string
	PartitionDate *time.Time // only with PartitionKey
	// IdempotencyKey, when set, must name no other event (ErrConflict).
	IdempotencyKey  string
	SourceKind      string // core.AssetSourceTask | AssetSourceAPI | AssetSourceWatcher
	SourceDagID     string
	SourceRunID     string
	SourceTaskID    string
	SourceMapIndex  int
	SourceTryNumber int
	SourceUser      string // the API user of an external event
	SourceWatcher   string // the watcher's name (AssetSourceWatcher)
	// SourceCallbackID is the callback of an asset_event notifier's event
	// (AssetSourceCallback); CallbackDepth its place in a chain of
	// callback events (docs/emission.md#feedback-loops).
	SourceCallbackID int64
	CallbackDepth    int
	Now              time.Time
	// Aliases are associated with the asset in the event's transaction
	// (before the event is queued, so DAGs scheduled on them are queued
	// too): a try's additions to its alias outlets.
	Aliases []string
}

// AssetEventListParams filters AssetEventList and AssetEventCount.
type AssetEventListParams struct {
	AssetID      int64  // 0 = any
	SourceDagID  string // "" = any
	SourceRunID  string
	SourceTaskID string
	PartitionKey string // "" = any
	// SourceMapIndex keeps the events of tries of this map index (nil =
	// any; -1 an unmapped task's, and events from outside a try).
	SourceMapIndex *int
	// AssetNameSearch keeps the events of assets whose name contains it,
	// ignoring case.
	AssetNameSearch string
	// Timestamp keeps the events recorded in the range.
	Timestamp TimeRange
	// ConsumedByRunID keeps the events the DAG run with this id consumed
	// (0 = any).
	ConsumedByRunID int64
	Cursor
	Page
}

// AssetQueueParams selects queued entries: of a DAG, of an asset or both,
// queued before a time (zero: any).
type AssetQueueParams struct {
	DagID   string
	AssetID int64
	Before  time.Time
}

// AssetQueueEntry is one asset's unconsumed events for a consumer DAG.
type AssetQueueEntry struct {
	AssetID      int64     `json:"asset_id"`
	AssetName    string    `json:"name"`
	DagID        string    `json:"dag_id"`
	FirstEventID int64     `json:"first_event_id"`
	LastEventID  int64     `json:"last_event_id"`
	CreatedAt    time.Time `json:"created_at"`
}

// Kinds of AssetLink.
const (
	AssetLinkProducer  = "producer"  // a task's outlet
	AssetLinkReader    = "reader"    // a task's inlet
	AssetLinkScheduled = "scheduled" // the DAG runs when the asset updates
)

// EventRun is a run an asset event created: a run that consumed it.
type EventRun struct {
	EventID int64
	Run     core.DagRun
}

// AssetLink is one use of an asset by an active DAG.
type AssetLink struct {
	AssetID   int64
	Kind      string // AssetLinkProducer, AssetLinkReader or AssetLinkScheduled
	DagID     string
	TaskID    string    // "" for AssetLinkScheduled
	CreatedAt time.Time // the sync that first recorded the use
	UpdatedAt time.Time // the last sync that wrote it
}
