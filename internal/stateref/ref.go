// Package stateref is the worker-side object-store backend of task state
// and asset state (docs/state-backends.md, `[workers] state_backend`). It runs in the
// worker and in the in-task CLI, never on the api-server: a value is
// written to an objstore.Store under a deterministic reference derived
// from its scope and key (task/<dag>/<run>/<task>/<map_index>/<key>, or
// asset/<name>/<key>), and only a small reference object is sent to the
// Execution API and kept in the database:
//
//	{"__weir_state_ref__": "task/etl/manual__2026-03-01T12%3A00%3A00%2B00%3A00/load/-1/checkpoint"}
//
// The server treats that object as an ordinary JSON value, so
// [state_store] max_value_bytes bounds the reference, not the value.
// State wraps the Execution API client with that behaviour for every kind
// of state; see docs/state-backends.md for the ordering and repair rules.
package stateref

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/weirflow/weir/internal/execclient"
)

// RefField is the only member of a reference object, the JSON value the
// database holds in place of a value kept in the object store.
const RefField = "__weir_state_ref__"

// maxSegment is the longest escaped component kept readable; a longer one
// is replaced by its hash, so a reference always fits objstore.MaxKeyLen
// and a file name (the FS store escapes "%" again, to "%25").
const maxSegment = 120

// TaskRef is the reference of key in the task state of the task instance
// id names: task/<dag_id>/<run_id>/<task_id>/<map_index>/<key>, each
// component escaped (see escape). Only the task instance counts (every try
// shares its state, so TIID and TryNumber are ignored): the same task
// instance and key always give the same reference, and distinct ones never
// share it.
func TaskRef(s execclient.TaskIdentity, key string) string {
	return TaskPrefix(s, false) + escape(key)
}

// TaskPrefix is the object-key prefix of every reference of a task
// instance, or, with allMapIndices, of every map index of its task in its
// run.
func TaskPrefix(s execclient.TaskIdentity, allMapIndices bool) string {
	p := "task/" + escape(s.DagID) + "/" + escape(s.RunID) + "/" + escape(s.TaskID) + "/"
	if allMapIndices {
		return p
	}
	return p + strconv.Itoa(s.MapIndex) + "/"
}

// AssetRef is the reference of key in the state of the asset named name:
// asset/<name>/<key>, escaped like TaskRef.
func AssetRef(name, key string) string {
	return AssetPrefix(name) + escape(key)
}

// AssetPrefix is the object-key prefix of every reference of an asset.
func AssetPrefix(name string) string { return "asset/" + escape(name) + "/" }

// escape turns one component into a single object-key segment. Bytes
// other than ASCII letters, digits, "_", "-" and "." are percent-encoded
// (%XX; "%" itself too, so the mapping is reversible), as are the dots of
// "." and ".."; the empty string becomes "~". A component whose escaped
// form is longer than maxSegment bytes becomes "~" and the hex SHA-256 of
// the component. "~" is always encoded otherwise, so the three forms never
// collide.
func escape(c string) string {
	if c == "" {
		return "~"
	}
	if c == "." || c == ".." {
		return strings.Repeat("%2E", len(c))
	}
	var b strings.Builder
	for i := 0; i < len(c); i++ {
		ch := c[i]
		if ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '_' || ch == '-' || ch == '.' {
			b.WriteByte(ch)
			continue
		}
		const hexDigits = "0123456789ABCDEF"
		b.WriteByte('%')
		b.WriteByte(hexDigits[ch>>4])
		b.WriteByte(hexDigits[ch&0xF])
	}
	if b.Len() > maxSegment {
		sum := sha256.Sum256([]byte(c))
		return "~" + hex.EncodeToString(sum[:])
	}
	return b.String()
}

// refObject is the JSON form of a reference.
type refObject struct {
	Ref string `json:"__weir_state_ref__"`
}

// Encode returns the reference object of ref, the value sent to the
// Execution API.
func Encode(ref string) json.RawMessage {
	b, _ := json.Marshal(refObject{Ref: ref}) // a struct of one string always encodes
	return b
}

// Decode returns the reference a stored value holds, and false when the
// value is not a reference object (an object whose only member is
// RefField, a string): such a value is an ordinary value kept inline, for
// example one written before the backend was configured.
func Decode(value json.RawMessage) (string, bool) {
	v := bytes.TrimSpace(value)
	if len(v) == 0 || v[0] != '{' || !bytes.Contains(v, []byte(RefField)) {
		return "", false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(v, &m) != nil || len(m) != 1 {
		return "", false
	}
	var ref string
	if raw, ok := m[RefField]; !ok || json.Unmarshal(raw, &ref) != nil || ref == "" {
		return "", false
	}
	return ref, true
}
