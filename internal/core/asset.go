package core

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// Asset is a piece of data a DAG produces or consumes, identified by its
// Name and its URI (both unique across Weir). A DAG defines the assets it
// uses in DAG.Assets; tasks and schedules refer to them with an AssetRef.
type Asset struct {
	Name  string         `json:"name"`
	URI   string         `json:"uri"`
	Group string         `json:"group,omitempty"` // "" = DefaultAssetGroup
	Extra map[string]any `json:"extra,omitempty"`
	// Watchers run continuously in the triggerer and record events of the
	// asset as they find new data (docs/watchers.md).
	Watchers []AssetWatcher `json:"watchers,omitempty"`
}

// DefaultAssetGroup is the group of an asset that names none (as Airflow).
const DefaultAssetGroup = "asset"

// AssetAlias names a set of assets that a task decides at run time.
type AssetAlias struct {
	Name string `json:"name"`
}

// AssetRef is how a task's inlets and outlets and a DAG's asset schedule
// name an asset: exactly one of Name, URI (a concrete asset defined in the
// DAG's Assets) or Alias is set.
type AssetRef struct {
	Name  string `json:"name,omitempty"`
	URI   string `json:"uri,omitempty"`
	Alias string `json:"alias,omitempty"`
}

// Concrete reports whether the reference names an asset rather than an alias.
func (r AssetRef) Concrete() bool { return r.Alias == "" }

// HasAliasOutlet reports whether the task declares an alias among its
// outlets (only then can its tries add events to aliases).
func (t *Task) HasAliasOutlet() bool {
	for _, r := range t.Outlets {
		if !r.Concrete() {
			return true
		}
	}
	return false
}

// String formats the reference as written in a DAG file: the name, uri:U or
// alias:A.
func (r AssetRef) String() string {
	switch {
	case r.Alias != "":
		return "alias:" + r.Alias
	case r.URI != "":
		return "uri:" + r.URI
	}
	return r.Name
}

// Asset returns the definition a concrete reference names, or nil (an alias,
// or an asset the DAG does not define).
func (d *DAG) Asset(r AssetRef) *Asset {
	if !r.Concrete() {
		return nil
	}
	for i := range d.Assets {
		a := &d.Assets[i]
		if (r.Name != "" && a.Name == r.Name) || (r.URI != "" && a.URI == r.URI) {
			return a
		}
	}
	return nil
}

// ConcreteAssets resolves refs to the DAG's asset definitions, skipping
// aliases and unknown references, without duplicates, in order.
func (d *DAG) ConcreteAssets(refs []AssetRef) []Asset {
	var out []Asset
	seen := map[string]bool{}
	for _, r := range refs {
		if a := d.Asset(r); a != nil && !seen[a.Name] {
			seen[a.Name] = true
			out = append(out, *a)
		}
	}
	return out
}

// AssetModel is an asset's row: its definition, whether any active DAG still
// defines it, and (for AssetGet) which DAGs are scheduled on it and which
// tasks produce it.
type AssetModel struct {
	ID            int64          `json:"id"`
	Name          string         `json:"name"`
	URI           string         `json:"uri"`
	Group         string         `json:"group"`
	Extra         map[string]any `json:"extra"`
	Active        bool           `json:"active"`
	InactiveSince *time.Time     `json:"inactive_since"` // when the last DAG defining it stopped doing so
	CreatedAt     time.Time      `json:"created_at"`
	UpdatedAt     time.Time      `json:"updated_at"`
	// Its users among the active DAGs (empty, never null, in a listed or
	// read asset; not read by AssetGetByName and AssetGetByURI): the DAGs
	// scheduled on it, the tasks with it as outlet and as inlet, by DAG
	// and task; the aliases it was added to, by name; its newest event.
	ScheduledDags []DagRef        `json:"scheduled_dags"`
	Producing     []TaskRef       `json:"producing_tasks"`
	Consuming     []TaskRef       `json:"consuming_tasks"`
	Aliases       []AliasRef      `json:"aliases"`
	LastEvent     *LastAssetEvent `json:"last_asset_event"`
}

// ProducingDags lists the DAGs of the tasks producing the asset, each once,
// in order: materializing it runs the DAG when there is exactly one.
func (a *AssetModel) ProducingDags() []string {
	var dags []string
	for _, t := range a.Producing {
		if !slices.Contains(dags, t.DagID) {
			dags = append(dags, t.DagID)
		}
	}
	return dags
}

// DagRef is a DAG scheduled on an asset: since when (the sync that first
// recorded it) and the last sync that wrote it.
type DagRef struct {
	DagID     string    `json:"dag_id"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// TaskRef is a task using an asset (an inlet or an outlet), with the times
// of DagRef.
type TaskRef struct {
	DagID     string    `json:"dag_id"`
	TaskID    string    `json:"task_id"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// AliasRef is an alias an asset was added to. Weir's aliases have no
// group: Group is Airflow's default, DefaultAssetGroup.
type AliasRef struct {
	ID    int64  `json:"id"`
	Name  string `json:"name"`
	Group string `json:"group"`
}

// LastAssetEvent is an asset's newest event.
type LastAssetEvent struct {
	ID        int64     `json:"id"`
	Timestamp time.Time `json:"timestamp"`
}

// Asset event sources.
const (
	AssetSourceTask = "task" // a task's declared outlet, on success
	AssetSourceAPI  = "api"  // POST /api/v2/assets/events
	// AssetSourceWatcher is an asset watcher's poll (docs/watchers.md).
	AssetSourceWatcher = "watcher"
)

// AssetEvent records that an asset was updated.
type AssetEvent struct {
	ID              int64           `json:"id"`
	AssetID         int64           `json:"asset_id"`
	Name            string          `json:"name"`
	URI             string          `json:"uri"`
	Group           string          `json:"group"`
	Extra           json.RawMessage `json:"extra"`
	PartitionKey    *string         `json:"partition_key"`
	PartitionDate   *time.Time      `json:"partition_date,omitempty"` // only with a partition key
	IdempotencyKey  string          `json:"idempotency_key,omitempty"`
	SourceKind      string          `json:"source_kind"` // AssetSourceTask | AssetSourceAPI | AssetSourceWatcher | AssetSourceCallback
	SourceDagID     string          `json:"source_dag_id,omitempty"`
	SourceRunID     string          `json:"source_run_id,omitempty"`
	SourceTaskID    string          `json:"source_task_id,omitempty"`
	SourceMapIndex  int             `json:"source_map_index"`
	SourceTryNumber int             `json:"source_try_number,omitempty"`
	SourceUser      string          `json:"source_user,omitempty"`    // the API user of an external event
	SourceWatcher   string          `json:"source_watcher,omitempty"` // the watcher's name
	Timestamp       time.Time       `json:"timestamp"`
	// SourceCallbackID is the callback whose asset_event notifier emitted
	// the event (source kind callback); CallbackDepth is 1 + the deepest
	// callback depth of the events that created that callback's run, 0
	// for an event no callback emitted (docs/emission.md#feedback-loops).
	SourceCallbackID int64 `json:"source_callback_id,omitempty"`
	CallbackDepth    int   `json:"callback_depth,omitempty"`
}

// ShorthandAsset returns the one concrete asset a task declares, for the
// asset-state shorthand that names no asset (docs/asset-state.md); with any
// other count the error says how many there are, then hint (how to name the
// asset), and wraps ErrInvalid.
func ShorthandAsset(declared []Asset, hint string) (Asset, error) {
	if len(declared) != 1 {
		return Asset{}, fmt.Errorf("task has %d concrete inlets and outlets; %s: %w", len(declared), hint, ErrInvalid)
	}
	return declared[0], nil
}
