package stateref

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/objstore"
	"github.com/weirflow/weir/internal/statevalue"
)

// ErrMissingObject is returned by a get when the database holds a
// reference whose object is not in the object store (removed outside Weir,
// or [workers] state_backend now names another store). It deliberately
// does not match core.ErrNotFound: the key exists, its value is lost.
var ErrMissingObject = errors.New("state reference has no object")

// objects is the object-store half of State, for one kind: it
// writes a value before its reference is stored (set), follows a stored
// reference (get), and removes objects after their rows are gone
// (delete, clear), logging failed removals instead of returning them.
type objects struct {
	store objstore.Store
	log   *slog.Logger
	what  string // "task state" or "asset state", for messages
}

// put checks key and value as the server would, writes the value's
// normalized JSON under ref and returns the reference object to store in
// its place.
func (o objects) put(ctx context.Context, key string, value json.RawMessage, ref string) (json.RawMessage, error) {
	if err := statevalue.CheckKey(key); err != nil {
		return nil, err
	}
	v, err := statevalue.ParseValue(value)
	if err != nil {
		return nil, err
	}
	if err := o.store.Put(ctx, ref, v); err != nil {
		return nil, fmt.Errorf("write %s %q to the object store as %s: %w", o.what, key, ref, err)
	}
	return Encode(ref), nil
}

// follow returns the value a stored raw value of key stands for: the
// object of its reference, or raw itself when it is not a reference (kept
// inline). A reference other than want, the scope's own reference for key,
// is refused rather than followed.
func (o objects) follow(ctx context.Context, key string, raw json.RawMessage, want string) (json.RawMessage, error) {
	ref, ok := Decode(raw)
	if !ok {
		return raw, nil
	}
	if ref != want {
		return nil, fmt.Errorf("%s %q holds reference %q, but the reference of this scope's key is %q: %w",
			o.what, key, ref, want, core.ErrInvalid)
	}
	data, err := o.store.Get(ctx, ref)
	if errors.Is(err, core.ErrNotFound) {
		return nil, fmt.Errorf("%s %q: the database holds reference %q but the object store %s has no object under it: %w",
			o.what, key, ref, storeName(o.store), ErrMissingObject)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s %q from the object store (%s): %w", o.what, key, ref, err)
	}
	if !json.Valid(data) {
		return nil, fmt.Errorf("%s %q: object %s in %s is not JSON: %w", o.what, key, ref, storeName(o.store), core.ErrInvalid)
	}
	return data, nil
}

// remove deletes the object of a deleted row, logging a failure: the next
// set of the key overwrites the orphan.
func (o objects) remove(ctx context.Context, ref string) {
	if err := o.store.Delete(ctx, ref); err != nil {
		o.log.Warn(o.what+" deleted, but its object could not be; the next set of the key overwrites it",
			"ref", ref, "store", storeName(o.store), "err", err)
	}
}

// removePrefix deletes every object under prefix after the scope's rows
// were cleared, logging failures as remove does.
func (o objects) removePrefix(ctx context.Context, prefix string) {
	refs, err := o.store.List(ctx, prefix)
	if err != nil {
		o.log.Warn(o.what+" cleared, but its objects could not be listed; they stay until each key is set again",
			"prefix", prefix, "store", storeName(o.store), "err", err)
		return
	}
	for _, ref := range refs {
		o.remove(ctx, ref)
	}
}

// storeName names st for messages (never with credentials).
func storeName(st objstore.Store) string {
	if s, ok := st.(fmt.Stringer); ok {
		return s.String()
	}
	return fmt.Sprintf("%T", st)
}
