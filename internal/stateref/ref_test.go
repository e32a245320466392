package stateref_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/execclient"

	"github.com/weirflow/weir/internal/objstore"
	"github.com/weirflow/weir/internal/stateref"
	"github.com/weirflow/weir/internal/statevalue"
)

var scope = execclient.TaskIdentity{DagID: "etl", RunID: "manual__2026-03-01T12:00:00+00:00", TaskID: "load", MapIndex: -1}

// docs/requirements.md#be-2: references are deterministic functions of scope and key,
// readable for ordinary names, and safe object keys for any key.
func TestRefs(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ got, want string }{
		{stateref.TaskRef(scope, "checkpoint"), "task/etl/manual__2026-03-01T12%3A00%3A00%2B00%3A00/load/-1/checkpoint"},
		{stateref.TaskRef(scope, "a/b"), "task/etl/manual__2026-03-01T12%3A00%3A00%2B00%3A00/load/-1/a%2Fb"},
		{stateref.TaskRef(scope, ".."), "task/etl/manual__2026-03-01T12%3A00%3A00%2B00%3A00/load/-1/%2E%2E"},
		{stateref.TaskRef(scope, "50%"), "task/etl/manual__2026-03-01T12%3A00%3A00%2B00%3A00/load/-1/50%25"},
		{stateref.TaskPrefix(scope, true), "task/etl/manual__2026-03-01T12%3A00%3A00%2B00%3A00/load/"},
		{stateref.AssetRef("s3://bucket/orders", "cursor"), "asset/s3%3A%2F%2Fbucket%2Forders/cursor"},
	} {
		if c.got != c.want {
			t.Errorf("ref = %q, want %q", c.got, c.want)
		}
	}
	long := strings.Repeat("ключ", 128) // 512 characters, 1024 bytes
	if r := stateref.TaskRef(scope, long); r != stateref.TaskRef(scope, long) || !strings.Contains(r, "/~") || len(r) > 300 {
		t.Errorf("a long key's reference %q is not a short hash form", r)
	}
}

// docs/requirements.md#be-2: distinct keys (and scopes) never share a reference, so no
// value can overwrite another's object.
func TestRefsDistinct(t *testing.T) {
	t.Parallel()
	keys := []string{"a", "b", "a/b", "a%2Fb", "a%252Fb", ".", "..", "%2E", "~", "", "A", " a", strings.Repeat("x", 200),
		strings.Repeat("x", 201), "ключ", "a.b", "a_b", "a-b"}
	seen := map[string]string{}
	for _, k := range keys {
		r := stateref.TaskRef(scope, k)
		if prev, dup := seen[r]; dup {
			t.Errorf("keys %q and %q share reference %q", prev, k, r)
		}
		seen[r] = k
	}
	other := scope
	other.MapIndex = 0
	if stateref.TaskRef(other, "a") == stateref.TaskRef(scope, "a") {
		t.Error("map indices -1 and 0 share a reference")
	}
	if !strings.HasPrefix(stateref.TaskRef(other, "a"), stateref.TaskPrefix(scope, true)) ||
		strings.HasPrefix(stateref.TaskRef(other, "a"), stateref.TaskPrefix(scope, false)) {
		t.Error("prefixes do not separate map indices")
	}
	sibling := scope
	sibling.TaskID = "load2"
	if strings.HasPrefix(stateref.TaskRef(sibling, "a"), stateref.TaskPrefix(scope, true)) {
		t.Error("task load's prefix covers task load2")
	}
}

// FuzzTaskRef: every valid state key gives a valid object key, within the
// length a file name and S3 allow, and a different one from another key.
func FuzzTaskRef(f *testing.F) {
	for _, s := range []string{"k", "a/b", "..", "%", strings.Repeat("é", 300)} {
		f.Add(s, "x")
	}
	f.Fuzz(func(t *testing.T, k1, k2 string) {
		if statevalue.CheckKey(k1) != nil {
			return
		}
		r := stateref.TaskRef(scope, k1)
		if err := objstore.ValidateKey(r); err != nil || len(r) > 600 {
			t.Fatalf("key %q: reference %q (%d bytes) is not a valid object key: %v", k1, r, len(r), err)
		}
		if k1 != k2 && r == stateref.TaskRef(scope, k2) {
			t.Fatalf("keys %q and %q share reference %q", k1, k2, r)
		}
	})
}

// docs/requirements.md#be-2: only an object whose sole member is the reference field, a
// string, is a reference; every other value is an ordinary one.
func TestDecode(t *testing.T) {
	t.Parallel()
	if ref, ok := stateref.Decode(stateref.Encode("task/d/r/t/-1/k")); !ok || ref != "task/d/r/t/-1/k" {
		t.Errorf("decode of an encoded reference = %q, %v", ref, ok)
	}
	for _, v := range []string{`1`, `"__weir_state_ref__"`, `{"__weir_state_ref__": 1}`, `{"__weir_state_ref__": ""}`,
		`{"__weir_state_ref__": "x", "other": 1}`, `[{"__weir_state_ref__": "x"}]`, `{}`} {
		if ref, ok := stateref.Decode(json.RawMessage(v)); ok {
			t.Errorf("%s decoded as reference %q", v, ref)
		}
	}
}
