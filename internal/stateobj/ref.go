// Package stateobj names the objects of the worker-side state backend
// (docs/state-backends.md, `[workers] state_backend`): a value kept in an
// object store lives under a reference derived from its scope and key
// and a unique id the server issues (task/<dag>/<run>/<task>/<map_index>/<key>/<id>,
// or asset/<name>/<key>/<id>), and the database holds only a small
// reference object in its place:
//
//	{"__weir_state_ref__": "task/etl/manual__2026-03-01T12%3A00%3A00%2B00%3A00/load/-1/checkpoint/3f2a…"}
//
// Both sides use it: the server issues and checks references (a row may
// only hold a reference to its own scope and key), the worker (package
// stateref) writes and follows them.
package stateobj

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/weirflow/weir/internal/core"
)

// RefField is the only member of a reference object, the JSON value the
// database holds in place of a value kept in the object store.
const RefField = "__weir_state_ref__"

// ValuePrefix begins the normalized JSON of every reference object. The
// server refuses any other value that begins with it, and the store hands
// the object of a removed row whose value begins with it to the sweep
// (migration 00015), so only issued references ever reach the sweep.
const ValuePrefix = `{"` + RefField + `":"`

// maxSegment is the longest escaped component kept readable; a longer one
// is replaced by its hash, so a reference always fits objstore.MaxKeyLen
// and a file name (the FS store escapes "%" again, to "%25").
const maxSegment = 120

// KeyPrefix is the part of every reference of key in scope before its
// id: task/<dag_id>/<run_id>/<task_id>/<map_index>/<key>/ for task state
// (only the task instance counts: every try shares its state), and
// asset/<name>/<key>/ for asset state (by the asset's name, however the
// task named it: scope.AssetName must be set). Each component is escaped
// (see escape), so distinct scopes and keys never share a prefix.
func KeyPrefix(scope core.StateScope, key string) string {
	return Prefix(scope, false) + escape(key) + "/"
}

// Prefix is the object-key prefix of every reference of scope: a task
// instance, or with allMapIndices every map index of its task in its run;
// an asset by name.
func Prefix(scope core.StateScope, allMapIndices bool) string {
	if scope.Kind == core.StateAsset {
		return "asset/" + escape(scope.AssetName) + "/"
	}
	p := "task/" + escape(scope.DagID) + "/" + escape(scope.RunID) + "/" + escape(scope.TaskID) + "/"
	if allMapIndices {
		return p
	}
	return p + strconv.Itoa(scope.MapIndex) + "/"
}

// New returns a fresh reference of key in scope: KeyPrefix and a random
// id. A reference is never issued twice, so an object removed after its
// row was deleted or overwritten can never be one a later write uses.
func New(scope core.StateScope, key string) string {
	var id [16]byte
	_, _ = rand.Read(id[:]) // crypto/rand.Read never fails
	return KeyPrefix(scope, key) + hex.EncodeToString(id[:])
}

// Owns reports whether ref is a reference of key in scope: KeyPrefix and
// one id segment, or KeyPrefix without its slash (the fixed reference of
// workers before ids were issued).
func Owns(scope core.StateScope, key, ref string) bool {
	p := KeyPrefix(scope, key)
	if ref == strings.TrimSuffix(p, "/") {
		return true
	}
	id, ok := strings.CutPrefix(ref, p)
	return ok && id != "" && !strings.Contains(id, "/")
}

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
