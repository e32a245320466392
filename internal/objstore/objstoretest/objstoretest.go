// Package objstoretest is the conformance suite every objstore.Store
// implementation passes: written once, run against the filesystem store on
// a temp dir and the S3 store on a real S3-compatible server.
//
//	objstoretest.Run(t, func(t *testing.T) objstore.Store { ... })
package objstoretest

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/objstore"
)

// Run runs every conformance test against stores made by newStore, which
// must return an empty store of its own for each call.
func Run(t *testing.T, newStore func(t *testing.T) objstore.Store) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, s objstore.Store)
	}{
		{"PutGet", testPutGet},
		{"Overwrite", testOverwrite},
		{"Absent", testAbsent},
		{"Delete", testDelete},
		{"ListByPrefix", testListByPrefix},
		{"KeyShapes", testKeyShapes},
		{"LargeValue", testLargeValue},
		{"ConcurrentWriters", testConcurrentWriters},
		{"InvalidKeys", testInvalidKeys},
		{"CanceledContext", testCanceledContext},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, newStore(t))
		})
	}
}

func testPutGet(t *testing.T, s objstore.Store) {
	ctx := t.Context()
	binary := make([]byte, 256)
	for i := range binary {
		binary[i] = byte(i)
	}
	for key, val := range map[string][]byte{
		"plain":        []byte(`{"job_id":"j-42"}`),
		"binary":       binary,
		"empty":        {},
		"nested/a/b/c": []byte("deep"),
	} {
		put(ctx, t, s, key, val)
		if got := get(ctx, t, s, key); !bytes.Equal(got, val) {
			t.Errorf("Get(%q) = %q, want %q", key, got, val)
		}
	}
}

func testOverwrite(t *testing.T, s objstore.Store) {
	ctx := t.Context()
	put(ctx, t, s, "k", []byte("a much longer first value"))
	put(ctx, t, s, "k", []byte("short"))
	if got := get(ctx, t, s, "k"); string(got) != "short" {
		t.Errorf("after overwrite Get = %q, want %q (no bytes of the old value may remain)", got, "short")
	}
	if keys := list(ctx, t, s, ""); !slices.Equal(keys, []string{"k"}) {
		t.Errorf("after overwrite List = %q, want one key", keys)
	}
}

func testAbsent(t *testing.T, s objstore.Store) {
	ctx := t.Context()
	for _, key := range []string{"never-written", "no/such/dir/key"} {
		if got, err := s.Get(ctx, key); !errors.Is(err, core.ErrNotFound) {
			t.Errorf("Get(%q) = %q, %v; want core.ErrNotFound", key, got, err)
		}
		if err := s.Delete(ctx, key); err != nil {
			t.Errorf("Delete(%q) of an absent key = %v, want nil", key, err)
		}
	}
	if keys := list(ctx, t, s, ""); len(keys) != 0 {
		t.Errorf("List of an empty store = %q", keys)
	}
	if keys := list(ctx, t, s, "no/such/"); len(keys) != 0 {
		t.Errorf("List(no/such/) = %q", keys)
	}
}

func testDelete(t *testing.T, s objstore.Store) {
	ctx := t.Context()
	put(ctx, t, s, "dir/a", []byte("1"))
	put(ctx, t, s, "dir/b", []byte("2"))
	if err := s.Delete(ctx, "dir/a"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if _, err := s.Get(ctx, "dir/a"); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("Get after Delete: err = %v, want core.ErrNotFound", err)
	}
	if err := s.Delete(ctx, "dir/a"); err != nil {
		t.Errorf("second Delete = %v, want nil", err)
	}
	if got := get(ctx, t, s, "dir/b"); string(got) != "2" {
		t.Errorf("Delete removed a neighbour: Get(dir/b) = %q", got)
	}
	if keys := list(ctx, t, s, ""); !slices.Equal(keys, []string{"dir/b"}) {
		t.Errorf("List after Delete = %q, want [dir/b]", keys)
	}
	// The folder emptied by the last Delete can be written again.
	if err := s.Delete(ctx, "dir/b"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	put(ctx, t, s, "dir/c", []byte("3"))
	if keys := list(ctx, t, s, "dir/"); !slices.Equal(keys, []string{"dir/c"}) {
		t.Errorf("List(dir/) = %q, want [dir/c]", keys)
	}
}

func testListByPrefix(t *testing.T, s objstore.Store) {
	ctx := t.Context()
	all := []string{"a", "a/b", "a/b/c", "a/bc", "ab", "b/x", "b/y/z"}
	for _, k := range all {
		put(ctx, t, s, k, []byte(k))
	}
	for prefix, want := range map[string][]string{
		"":       all,
		"a":      {"a", "a/b", "a/b/c", "a/bc", "ab"},
		"a/":     {"a/b", "a/b/c", "a/bc"},
		"a/b":    {"a/b", "a/b/c", "a/bc"},
		"a/b/":   {"a/b/c"},
		"b/y/":   {"b/y/z"},
		"b/y/z":  {"b/y/z"},
		"c":      nil,
		"a/b/c/": nil,
	} {
		if got := list(ctx, t, s, prefix); !slices.Equal(got, want) {
			t.Errorf("List(%q) = %q, want %q", prefix, got, want)
		}
	}
}

// testKeyShapes covers keys a naive mapping to paths or URLs would break.
func testKeyShapes(t *testing.T, s objstore.Store) {
	ctx := t.Context()
	keys := []string{
		"percent%25/x%obj",
		"%",
		".hidden/..dots../x.",
		"space in key/and+plus",
		"ünïcödé/κλειδί/鍵",
		"dag=etl/run=manual__2026-01-01T00:00:00+00:00/task=load/map=-1/checkpoint",
		strings.Repeat("x", 200) + "/" + strings.Repeat("y", 200),
	}
	for _, k := range keys {
		put(ctx, t, s, k, []byte("v:"+k))
	}
	for _, k := range keys {
		if got := get(ctx, t, s, k); string(got) != "v:"+k {
			t.Errorf("Get(%q) = %q", k, got)
		}
	}
	want := slices.Clone(keys)
	slices.Sort(want)
	if got := list(ctx, t, s, ""); !slices.Equal(got, want) {
		t.Errorf("List = %q, want %q", got, want)
	}
}

func testLargeValue(t *testing.T, s objstore.Store) {
	ctx := t.Context()
	big := make([]byte, 5<<20+123)
	_, _ = rand.Read(big)
	put(ctx, t, s, "big/value", big)
	if got := get(ctx, t, s, "big/value"); !bytes.Equal(got, big) {
		t.Fatalf("Get of a %d-byte value returned %d bytes that differ", len(big), len(got))
	}
	put(ctx, t, s, "big/value", big[:1000])
	if got := get(ctx, t, s, "big/value"); !bytes.Equal(got, big[:1000]) {
		t.Fatalf("after shrinking, Get returned %d bytes, want 1000", len(got))
	}
}

// testConcurrentWriters has writers race on one shared key and on keys of
// their own while readers check that every value they see is whole.
func testConcurrentWriters(t *testing.T, s objstore.Store) {
	ctx := t.Context()
	const writers, rounds = 8, 5
	value := func(w, r int) []byte {
		// Values differ in length and content so a torn read shows.
		return bytes.Repeat([]byte(fmt.Sprintf("w%d-r%d;", w, r)), 1000*(w+1))
	}
	valid := map[string]bool{}
	for w := range writers {
		for r := range rounds {
			valid[string(value(w, r))] = true
		}
	}
	put(ctx, t, s, "shared", value(0, 0))

	var wg sync.WaitGroup
	errs := make(chan error, writers*rounds*3)
	for w := range writers {
		wg.Go(func() {
			for r := range rounds {
				if err := s.Put(ctx, "shared", value(w, r)); err != nil {
					errs <- fmt.Errorf("writer %d: Put shared: %w", w, err)
				}
				own := fmt.Sprintf("own/%d/%d", w, r)
				if err := s.Put(ctx, own, value(w, r)); err != nil {
					errs <- fmt.Errorf("writer %d: Put %s: %w", w, own, err)
				}
				got, err := s.Get(ctx, "shared")
				switch {
				case err != nil:
					errs <- fmt.Errorf("writer %d: Get shared: %w", w, err)
				case !valid[string(got)]:
					errs <- fmt.Errorf("writer %d: Get shared returned a torn value of %d bytes", w, len(got))
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := get(ctx, t, s, "shared"); !valid[string(got)] {
		t.Errorf("final shared value is not one that was written (%d bytes)", len(got))
	}
	for w := range writers {
		for r := range rounds {
			key := fmt.Sprintf("own/%d/%d", w, r)
			if got := get(ctx, t, s, key); !bytes.Equal(got, value(w, r)) {
				t.Errorf("Get(%s) lost its writer's value", key)
			}
		}
	}
	if n := len(list(ctx, t, s, "own/")); n != writers*rounds {
		t.Errorf("List(own/) has %d keys, want %d", n, writers*rounds)
	}
}

func testInvalidKeys(t *testing.T, s objstore.Store) {
	ctx := t.Context()
	bad := []string{
		"", "/abs", "..", ".", "a/../b", "../escape", "a/..", "a/./b", "a//b", "a/",
		"nul\x00byte", "new\nline", "\xff\xfe", strings.Repeat("k", objstore.MaxKeyLen+1),
	}
	for _, key := range bad {
		if err := s.Put(ctx, key, []byte("x")); !errors.Is(err, core.ErrInvalid) {
			t.Errorf("Put(%q) = %v, want core.ErrInvalid", key, err)
		}
		if _, err := s.Get(ctx, key); !errors.Is(err, core.ErrInvalid) {
			t.Errorf("Get(%q) err = %v, want core.ErrInvalid", key, err)
		}
		if err := s.Delete(ctx, key); !errors.Is(err, core.ErrInvalid) {
			t.Errorf("Delete(%q) = %v, want core.ErrInvalid", key, err)
		}
	}
	for _, prefix := range []string{"/abs", "../", "a/../", "a//"} {
		if _, err := s.List(ctx, prefix); !errors.Is(err, core.ErrInvalid) {
			t.Errorf("List(%q) err = %v, want core.ErrInvalid", prefix, err)
		}
	}
	if keys := list(ctx, t, s, ""); len(keys) != 0 {
		t.Errorf("refused writes left keys behind: %q", keys)
	}
}

func testCanceledContext(t *testing.T, s objstore.Store) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := s.Put(ctx, "k", []byte("v")); !errors.Is(err, context.Canceled) {
		t.Errorf("Put with a canceled context = %v, want context.Canceled", err)
	}
	if keys := list(t.Context(), t, s, ""); len(keys) != 0 {
		t.Errorf("a canceled Put stored %q", keys)
	}
}

func put(ctx context.Context, t *testing.T, s objstore.Store, key string, val []byte) {
	t.Helper()
	if err := s.Put(ctx, key, val); err != nil {
		t.Fatalf("Put(%q): %v", key, err)
	}
}

func get(ctx context.Context, t *testing.T, s objstore.Store, key string) []byte {
	t.Helper()
	got, err := s.Get(ctx, key)
	if err != nil {
		t.Fatalf("Get(%q): %v", key, err)
	}
	return got
}

func list(ctx context.Context, t *testing.T, s objstore.Store, prefix string) []string {
	t.Helper()
	keys, err := s.List(ctx, prefix)
	if err != nil {
		t.Fatalf("List(%q): %v", prefix, err)
	}
	return keys
}
