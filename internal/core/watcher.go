package core

import (
	"encoding/json"
	"strings"
	"time"
)

// AssetWatcher is a trigger that runs continuously for an asset: each new
// thing it finds becomes an event of the asset (docs/watchers.md). Name is
// unique among the asset's watchers and keys the watcher's cursor.
type AssetWatcher struct {
	Name    string      `json:"name"`
	Trigger TriggerSpec `json:"trigger"`
}

// WatcherKeyPrefix begins the asset-state keys of the asset's watchers:
// their cursors, which only the watchers (and audited admin edits) write.
// A task may read them, not write them (docs/asset-state.md).
const WatcherKeyPrefix = "watcher/"

// WatcherCursorKey is the asset-state key holding the cursor of the
// asset's watcher name: the cursor is asset state, written by the watcher
// in the transaction of the events it covers (docs/watchers.md#cursors).
func WatcherCursorKey(name string) string { return WatcherKeyPrefix + name + "/cursor" }

// WatcherOfCursorKey returns the watcher whose cursor key is key
// (WatcherCursorKey), and whether key is one.
func WatcherOfCursorKey(key string) (string, bool) {
	name, ok := strings.CutPrefix(key, WatcherKeyPrefix)
	if !ok {
		return "", false
	}
	name, ok = strings.CutSuffix(name, "/cursor")
	return name, ok && name != ""
}

// IsWatcherKey says whether key is one of an asset's watchers' state keys.
func IsWatcherKey(key string) bool { return strings.HasPrefix(key, WatcherKeyPrefix) }

// Watcher is one asset watcher's row: its definition, the trigger running
// it, its cursor and its health (docs/watchers.md#health).
type Watcher struct {
	AssetID    int64          `json:"asset_id"`
	AssetName  string         `json:"asset_name"`
	AssetURI   string         `json:"asset_uri"`
	AssetExtra map[string]any `json:"-"`
	Name       string         `json:"name"`
	// DagID is the DAG whose file declares the watcher.
	DagID   string      `json:"dag_id"`
	Trigger TriggerSpec `json:"trigger"`
	// TriggerID is the trigger row running it (0 = none yet) and
	// TriggererID the triggerer running that row ("" = unassigned).
	TriggerID   int64  `json:"trigger_id,omitempty"`
	TriggererID string `json:"triggerer_id,omitempty"`
	// Cursor is the committed cursor (nil = none yet), CursorUpdatedAt
	// when it was written. CursorVersion identifies that write: a commit
	// names the version it read, so a cursor changed meanwhile (an admin
	// reset) is never overwritten by a poll that started before.
	Cursor          json.RawMessage `json:"cursor"`
	CursorUpdatedAt *time.Time      `json:"cursor_updated_at"`
	CursorVersion   int64           `json:"-"`
	// Health: the last poll (when, how long), the last event, the last
	// error and how many polls in a row failed.
	LastPollAt     *time.Time `json:"last_poll_at"`
	LastPollMillis int64      `json:"last_poll_duration_ms"`
	LastEventAt    *time.Time `json:"last_event_at"`
	LastEventID    int64      `json:"last_event_id,omitempty"`
	Events         int64      `json:"events"`
	LastError      string     `json:"last_error,omitempty"`
	LastErrorAt    *time.Time `json:"last_error_at"`
	ErrorsInRow    int        `json:"consecutive_errors"`
	CreatedAt      time.Time  `json:"created_at"`
	TriggererAlive bool       `json:"triggerer_alive"`
}
