package statestore

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/stateobj"
	"github.com/weirflow/weir/internal/statevalue"
	"github.com/weirflow/weir/internal/store"
)

// DefaultObjectGrace is [state_store] object_grace's default.
const DefaultObjectGrace = time.Hour

// objectLease is how long a sweeper holds the references it claimed before
// another may claim them again.
const objectLease = 10 * time.Minute

// ReserveObject issues a new object reference for key in scope, for a
// running try's write through the worker-side backend
// (docs/state-backends.md#sweeping); the caller has authorized the write.
// The worker writes the object under it, then stores the reference with
// Set within [state_store] object_grace; otherwise the sweep removes the
// object. It returns the scope with an asset's name.
func (s *Service) ReserveObject(ctx context.Context, scope core.StateScope, key string) (string, core.StateScope, error) {
	if err := statevalue.CheckKey(key); err != nil {
		return "", scope, err
	}
	scope, err := s.named(ctx, scope)
	if err != nil {
		return "", scope, err
	}
	ref := stateobj.New(scope, key)
	if err := s.st.StateObjectReserve(ctx, ref, s.clock.Now().Add(s.cfg.ObjectGrace)); err != nil {
		return "", scope, err
	}
	return ref, scope, nil
}

// ClaimObjects leases up to limit references whose objects are due for
// deletion: their rows went, or their write never stored them.
func (s *Service) ClaimObjects(ctx context.Context, limit int) ([]string, error) {
	return s.st.StateObjectClaim(ctx, &store.StateObjectClaimParams{Now: s.clock.Now(), Limit: min(max(limit, 0), 1000),
		Lease: objectLease})
}

// ObjectsSwept forgets references whose objects a sweeper deleted.
func (s *Service) ObjectsSwept(ctx context.Context, refs []string) error {
	return s.st.StateObjectDone(ctx, refs)
}

// objectOf returns the object reference a value holds ("" for an ordinary
// value). A value that begins like a reference must be one of key in
// scope: references name objects the sweep deletes once their row goes, so
// a value may not name another scope's.
func (s *Service) objectOf(ctx context.Context, scope core.StateScope, key string, value []byte) (string, error) {
	if !strings.HasPrefix(string(value), stateobj.ValuePrefix) {
		return "", nil
	}
	ref, ok := stateobj.Decode(value)
	if !ok {
		return "", fmt.Errorf("state key %q: a value beginning with {%q: is an object reference of the worker-side state backend, "+
			"and must have no other member: %w", key, stateobj.RefField, core.ErrInvalid)
	}
	scope, err := s.named(ctx, scope)
	if err != nil {
		return "", err
	}
	if !stateobj.Owns(scope, key, ref) {
		return "", fmt.Errorf("state key %q: object reference %q is not one of this key of %s: %w", key, ref, scope.Describe(), core.ErrInvalid)
	}
	return ref, nil
}

// named returns an asset scope with its name (references name assets by
// name); other scopes pass through.
func (s *Service) named(ctx context.Context, scope core.StateScope) (core.StateScope, error) {
	if scope.Kind != core.StateAsset || scope.AssetName != "" && scope.AssetID != 0 {
		return scope, nil
	}
	a, err := s.ResolveAsset(ctx, scope)
	if err != nil {
		return scope, err
	}
	return assetScope(a), nil
}
