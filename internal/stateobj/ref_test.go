package stateobj_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/objstore"
	"github.com/weirflow/weir/internal/stateobj"
	"github.com/weirflow/weir/internal/statevalue"
)

var scope = core.TaskScope("etl", "manual__2026-03-01T12:00:00+00:00", "load", -1)

// ref is the fixed part of key's references in sc (KeyPrefix without its slash).
func ref(sc core.StateScope, key string) string {
	return strings.TrimSuffix(stateobj.KeyPrefix(sc, key), "/")
}

// docs/requirements.md#be-2: references are functions of scope and key (and an id),
// readable for ordinary names, and safe object keys for any key.
func TestRefs(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ got, want string }{
		{ref(scope, "checkpoint"), "task/etl/manual__2026-03-01T12%3A00%3A00%2B00%3A00/load/-1/checkpoint"},
		{ref(scope, "a/b"), "task/etl/manual__2026-03-01T12%3A00%3A00%2B00%3A00/load/-1/a%2Fb"},
		{ref(scope, ".."), "task/etl/manual__2026-03-01T12%3A00%3A00%2B00%3A00/load/-1/%2E%2E"},
		{ref(scope, "50%"), "task/etl/manual__2026-03-01T12%3A00%3A00%2B00%3A00/load/-1/50%25"},
		{stateobj.Prefix(scope, true), "task/etl/manual__2026-03-01T12%3A00%3A00%2B00%3A00/load/"},
		{ref(core.AssetScopeByName("s3://bucket/orders"), "cursor"), "asset/s3%3A%2F%2Fbucket%2Forders/cursor"},
	} {
		if c.got != c.want {
			t.Errorf("ref = %q, want %q", c.got, c.want)
		}
	}
	long := strings.Repeat("ключ", 128) // 512 characters, 1024 bytes
	if r := ref(scope, long); r != ref(scope, long) || !strings.Contains(r, "/~") || len(r) > 300 {
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
		r := ref(scope, k)
		if prev, dup := seen[r]; dup {
			t.Errorf("keys %q and %q share reference %q", prev, k, r)
		}
		seen[r] = k
	}
	other := scope
	other.MapIndex = 0
	if ref(other, "a") == ref(scope, "a") {
		t.Error("map indices -1 and 0 share a reference")
	}
	if !strings.HasPrefix(ref(other, "a"), stateobj.Prefix(scope, true)) ||
		strings.HasPrefix(ref(other, "a"), stateobj.Prefix(scope, false)) {
		t.Error("prefixes do not separate map indices")
	}
	sibling := scope
	sibling.TaskID = "load2"
	if strings.HasPrefix(ref(sibling, "a"), stateobj.Prefix(scope, true)) {
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
		r := ref(scope, k1)
		if err := objstore.ValidateKey(r); err != nil || len(r) > 600 {
			t.Fatalf("key %q: reference %q (%d bytes) is not a valid object key: %v", k1, r, len(r), err)
		}
		if k1 != k2 && r == ref(scope, k2) {
			t.Fatalf("keys %q and %q share reference %q", k1, k2, r)
		}
	})
}

// docs/requirements.md#be-2: only an object whose sole member is the reference field, a
// string, is a reference; every other value is an ordinary one.
func TestDecode(t *testing.T) {
	t.Parallel()
	if ref, ok := stateobj.Decode(stateobj.Encode("task/d/r/t/-1/k")); !ok || ref != "task/d/r/t/-1/k" {
		t.Errorf("decode of an encoded reference = %q, %v", ref, ok)
	}
	for _, v := range []string{`1`, `"__weir_state_ref__"`, `{"__weir_state_ref__": 1}`, `{"__weir_state_ref__": ""}`,
		`{"__weir_state_ref__": "x", "other": 1}`, `[{"__weir_state_ref__": "x"}]`, `{}`} {
		if ref, ok := stateobj.Decode(json.RawMessage(v)); ok {
			t.Errorf("%s decoded as reference %q", v, ref)
		}
	}
}

// docs/requirements.md#be-2: every issued reference is new, and owned by its
// scope and key only.
func TestNewAndOwns(t *testing.T) {
	t.Parallel()
	a, b := stateobj.New(scope, "k"), stateobj.New(scope, "k")
	if a == b || !strings.HasPrefix(a, stateobj.KeyPrefix(scope, "k")) {
		t.Fatalf("two references of one key: %q and %q, want distinct ones under %q", a, b, stateobj.KeyPrefix(scope, "k"))
	}
	other := scope
	other.MapIndex = 0
	for _, c := range []struct {
		scope core.StateScope
		key   string
		ref   string
		want  bool
	}{
		{scope, "k", a, true},
		{scope, "k", ref(scope, "k"), true}, // the fixed reference of earlier workers
		{scope, "k2", a, false},
		{other, "k", a, false},
		{scope, "k", a + "/x", false},
		{scope, "k", stateobj.KeyPrefix(scope, "k"), false},
		{core.AssetScopeByName("orders"), "k", a, false},
	} {
		if got := stateobj.Owns(c.scope, c.key, c.ref); got != c.want {
			t.Errorf("Owns(%s, %q, %q) = %v, want %v", c.scope.Describe(), c.key, c.ref, got, c.want)
		}
	}
}
