package core

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// StateKind is a kind of state scope (docs/task-state.md, docs/asset-state.md).
// Each kind has its own table; everything else about state (keys, values,
// entries, handlers, client, CLI) is shared by every kind.
type StateKind string

// The state kinds.
const (
	// StateTask is task state: one task instance, shared by its tries.
	StateTask StateKind = "task"
	// StateAsset is asset state: one asset, independent of runs.
	StateAsset StateKind = "asset"
)

// StateScope is what a state key belongs to. Kind says which fields name
// it: a task scope names a task instance (DagID, RunID, TaskID, MapIndex,
// -1 when unmapped); an asset scope names an asset by AssetID, AssetName or
// AssetURI (a request may give any one; what the store returns has all
// three). A new kind adds its constant, its fields and its table.
type StateScope struct {
	Kind StateKind `json:"kind"`

	DagID    string `json:"dag_id,omitempty"`
	RunID    string `json:"dag_run_id,omitempty"`
	TaskID   string `json:"task_id,omitempty"`
	MapIndex int    `json:"map_index" doc:"task state only"`

	AssetID   int64  `json:"asset_id,omitempty"`
	AssetName string `json:"asset_name,omitempty"`
	AssetURI  string `json:"asset_uri,omitempty"`
}

// TaskScope is the task-state scope of one task instance.
func TaskScope(dagID, runID, taskID string, mapIndex int) StateScope {
	return StateScope{Kind: StateTask, DagID: dagID, RunID: runID, TaskID: taskID, MapIndex: mapIndex}
}

// AssetScope is the asset-state scope of the asset with id.
func AssetScope(id int64) StateScope {
	return StateScope{Kind: StateAsset, MapIndex: NoMapIndex, AssetID: id}
}

// AssetScopeByName is the asset-state scope of the asset named name.
func AssetScopeByName(name string) StateScope {
	return StateScope{Kind: StateAsset, MapIndex: NoMapIndex, AssetName: name}
}

// AssetScopeByURI is the asset-state scope of the asset with uri.
func AssetScopeByURI(uri string) StateScope {
	return StateScope{Kind: StateAsset, MapIndex: NoMapIndex, AssetURI: uri}
}

// Validate reports a scope that names nothing: a task scope without its
// dag, run or task, an asset scope without an id, name or uri, or an
// unknown kind. Errors wrap ErrInvalid.
func (s StateScope) Validate() error {
	switch s.Kind {
	case StateTask:
		if s.DagID == "" || s.RunID == "" || s.TaskID == "" {
			return fmt.Errorf("a task state scope needs a dag id, run id and task id, got %s: %w", s, ErrInvalid)
		}
		return nil
	case StateAsset:
		if s.AssetID == 0 && s.AssetName == "" && s.AssetURI == "" {
			return fmt.Errorf("an asset state scope needs an asset id, name or uri: %w", ErrInvalid)
		}
		return nil
	}
	return fmt.Errorf("unknown state scope kind %q (want %q or %q): %w", s.Kind, StateTask, StateAsset, ErrInvalid)
}

// String names the scope in messages and as the audit log's target: a task
// instance as dag/run/task (with /map_index when mapped), an asset by its
// name, else its uri, else #id.
func (s StateScope) String() string {
	switch s.Kind {
	case StateTask:
		t := s.DagID + "/" + s.RunID + "/" + s.TaskID
		if s.MapIndex >= 0 {
			t += "/" + strconv.Itoa(s.MapIndex)
		}
		return t
	case StateAsset:
		switch {
		case s.AssetName != "":
			return s.AssetName
		case s.AssetURI != "":
			return s.AssetURI
		}
		return "#" + strconv.FormatInt(s.AssetID, 10)
	}
	return string(s.Kind) + " scope"
}

// Describe names the scope in a sentence: task instance dag/run/task[/map
// index], asset "name", asset with uri "uri" or asset id N.
func (s StateScope) Describe() string {
	switch {
	case s.Kind == StateTask:
		return "task instance " + s.String()
	case s.Kind != StateAsset:
		return s.String()
	case s.AssetName != "":
		return "asset " + strconv.Quote(s.AssetName)
	case s.AssetURI != "":
		return "asset with uri " + strconv.Quote(s.AssetURI)
	}
	return "asset id " + strconv.FormatInt(s.AssetID, 10)
}

// scopeJSON is a scope on the wire: the kind, then only its own fields.
type scopeJSON struct {
	Kind      StateKind `json:"kind"`
	DagID     string    `json:"dag_id,omitempty"`
	RunID     string    `json:"dag_run_id,omitempty"`
	TaskID    string    `json:"task_id,omitempty"`
	MapIndex  *int      `json:"map_index,omitempty"`
	AssetID   int64     `json:"asset_id,omitempty"`
	AssetName string    `json:"asset_name,omitempty"`
	AssetURI  string    `json:"asset_uri,omitempty"`
}

// MarshalJSON writes the kind and the fields of that kind: {"kind": "task",
// "dag_id", "dag_run_id", "task_id", "map_index"} or {"kind": "asset",
// "asset_id", "asset_name", "asset_uri"}.
func (s StateScope) MarshalJSON() ([]byte, error) {
	j := scopeJSON{Kind: s.Kind}
	switch s.Kind {
	case StateTask:
		mi := s.MapIndex
		j.DagID, j.RunID, j.TaskID, j.MapIndex = s.DagID, s.RunID, s.TaskID, &mi
	case StateAsset:
		j.AssetID, j.AssetName, j.AssetURI = s.AssetID, s.AssetName, s.AssetURI
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON writes; an absent map_index is -1.
func (s *StateScope) UnmarshalJSON(b []byte) error {
	var j scopeJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*s = StateScope{Kind: j.Kind, DagID: j.DagID, RunID: j.RunID, TaskID: j.TaskID, MapIndex: NoMapIndex,
		AssetID: j.AssetID, AssetName: j.AssetName, AssetURI: j.AssetURI}
	if j.MapIndex != nil {
		s.MapIndex = *j.MapIndex
	}
	return nil
}

// Writer kinds of state: who last wrote an entry (docs/asset-state.md#provenance).
const (
	StateWriterTask    = "task"    // a running task try, through the Execution API
	StateWriterWatcher = "watcher" // an asset watcher
	StateWriterAPI     = "api"     // a program through the REST API, without a user
	StateWriterUser    = "user"    // a user, through the REST API or the admin CLI
)

// StateWriter records who last wrote an entry. A task writer names its try
// (DagID, RunID, TaskID, MapIndex, TryNumber); a user writer names the
// user. The fields are copies, not references, so they outlive the run
// that wrote them.
type StateWriter struct {
	Kind      string `json:"kind"`
	DagID     string `json:"dag_id,omitempty"`
	RunID     string `json:"dag_run_id,omitempty"`
	TaskID    string `json:"task_id,omitempty"`
	MapIndex  int    `json:"map_index"`
	TryNumber int    `json:"try_number,omitempty"`
	User      string `json:"user,omitempty"`
	// Watcher names the asset watcher of a watcher writer (its asset is
	// the entry's).
	Watcher string `json:"watcher,omitempty"`
}

// WatcherWriter is the writer of an asset watcher.
func WatcherWriter(name string) StateWriter {
	return StateWriter{Kind: StateWriterWatcher, MapIndex: NoMapIndex, Watcher: name}
}

// TaskWriter is the writer of a task try.
func TaskWriter(ti *TaskInstance) StateWriter {
	return StateWriter{Kind: StateWriterTask, DagID: ti.DagID, RunID: ti.RunID, TaskID: ti.TaskID,
		MapIndex: ti.MapIndex, TryNumber: ti.TryNumber}
}

// UserWriter is the writer of a person through the REST API or the admin CLI.
func UserWriter(name string) StateWriter {
	return StateWriter{Kind: StateWriterUser, MapIndex: NoMapIndex, User: name}
}

// StateEntry is one stored key with its value and metadata, in every scope
// kind; it is also the JSON both the REST API and the Execution API answer.
type StateEntry struct {
	Scope StateScope      `json:"scope"`
	Key   string          `json:"key"`
	Value json.RawMessage `json:"value"`
	// UpdatedAt is when the value was last written, UpdatedBy by whom.
	UpdatedAt time.Time   `json:"updated_at"`
	UpdatedBy StateWriter `json:"last_updated_by"`
	// ExpiresAt is when cleanup may delete the entry (nil = no expiry);
	// NeverExpire marks a key written with the never-expire retention.
	// Only task state has retention.
	ExpiresAt   *time.Time `json:"expires_at"`
	NeverExpire bool       `json:"never_expire"`
	// AssetInactiveSince is, for asset state, when the asset stopped being
	// defined by any active DAG (nil while it is active): what cleanup's
	// orphan sweep looks at.
	AssetInactiveSince *time.Time `json:"-"`
}
