package stateref

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/stateobj"
)

// ErrMissingObject is returned by a get when the database holds a
// reference whose object is not in the object store (removed outside Weir,
// or [workers] state_backend now names another store). It deliberately
// does not match core.ErrNotFound: the key exists, its value is lost.
var ErrMissingObject = errors.New("state reference has no object")

// objects is the object-store half of State, for one kind: it writes a
// value before its reference is stored (put) and follows a stored
// reference (get). Objects are deleted by the sweep (Sweeper), never here.
type objects struct {
	store Objects
	what  string // "task state" or "asset state", for messages
}

// put writes v, a checked and normalized value of key, under ref and
// returns the reference object to store in its place.
func (o objects) put(ctx context.Context, key string, v json.RawMessage, ref string) (json.RawMessage, error) {
	if err := o.store.Put(ctx, ref, v); err != nil {
		return nil, fmt.Errorf("write %s %q to the object store as %s: %w", o.what, key, ref, err)
	}
	return stateobj.Encode(ref), nil
}

// follow returns the value a stored raw value of key stands for: the
// object of its reference, or raw itself when it is not a reference (kept
// inline). A reference that is not one of key in owner's scope is refused
// rather than followed.
func (o objects) follow(ctx context.Context, key string, raw json.RawMessage, owner core.StateScope) (json.RawMessage, error) {
	ref, ok := stateobj.Decode(raw)
	if !ok {
		return raw, nil
	}
	if !stateobj.Owns(owner, key, ref) {
		return nil, fmt.Errorf("%s %q holds reference %q, which is not one of this key of %s (%s…): %w",
			o.what, key, ref, owner.Describe(), stateobj.KeyPrefix(owner, key), core.ErrInvalid)
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

// storeName names st for messages (never with credentials).
func storeName(st Objects) string {
	if s, ok := st.(fmt.Stringer); ok {
		return s.String()
	}
	return fmt.Sprintf("%T", st)
}
