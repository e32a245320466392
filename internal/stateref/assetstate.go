package stateref

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/objstore"
)

// AssetState is a try's asset state through the worker-side backend: the
// Execution API client's asset-state methods, with every value kept in an
// object store under asset/<name>/<key> and only its reference in the
// database. An asset named by uri is first resolved to its name, so the
// name and the uri of one asset reach the same object. It satisfies
// operator.AssetState.
type AssetState struct {
	client *execclient.Client
	obj    objects
}

// NewAssetState wraps c, a client holding a try's identity, so that the
// asset state values it writes live in st. Failed object deletes are
// reported on log (nil = discarded).
func NewAssetState(c *execclient.Client, st objstore.Store, log *slog.Logger) *AssetState {
	return &AssetState{client: c, obj: newObjects(st, log, "asset state")}
}

// DeclaredAssets lists the task's concrete inlets and outlets, once each.
func (s *AssetState) DeclaredAssets(ctx context.Context) ([]core.Asset, error) {
	return s.client.DeclaredAssets(ctx)
}

// AssetStateSet resolves the asset's name among the assets the task
// declares (only those may be written), writes value to the object store
// under asset/<name>/<key>, then stores the reference through the
// Execution API. As for task state, a failure between the two leaves an
// object that the next set of key overwrites.
func (s *AssetState) AssetStateSet(ctx context.Context, ref core.AssetRef, key string, value json.RawMessage) error {
	name, err := s.declaredName(ctx, ref)
	if err != nil {
		return err
	}
	stored, err := s.obj.put(ctx, key, value, AssetRef(name, key))
	if err != nil {
		return err
	}
	return s.client.AssetStateSet(ctx, core.AssetRef{Name: name}, key, stored)
}

// AssetStateGet returns key's value: the object its reference names, or
// the stored value itself when it is not a reference. The asset's name
// comes from the API's answer, so an asset the task may only read
// ([state_store] allow_undeclared_asset_reads) works too. An absent key
// matches core.ErrNotFound; a reference without its object matches
// ErrMissingObject.
func (s *AssetState) AssetStateGet(ctx context.Context, ref core.AssetRef, key string) (json.RawMessage, error) {
	e, err := s.client.AssetStateEntry(ctx, ref, key)
	if err != nil {
		return nil, err
	}
	name := e.AssetName
	if name == "" {
		if name, err = s.declaredName(ctx, ref); err != nil {
			return nil, err
		}
	}
	return s.obj.follow(ctx, key, e.Value, AssetRef(name, key))
}

// AssetStateDelete deletes key's row, then its object; a failed object
// delete is logged, not returned.
func (s *AssetState) AssetStateDelete(ctx context.Context, ref core.AssetRef, key string) error {
	if err := s.client.AssetStateDelete(ctx, ref, key); err != nil {
		return err
	}
	if name, ok := s.nameAfterWrite(ctx, ref); ok {
		s.obj.remove(ctx, AssetRef(name, key))
	}
	return nil
}

// AssetStateClear deletes every row of the asset, then every object under
// asset/<name>/; failed object deletes are logged, not returned.
func (s *AssetState) AssetStateClear(ctx context.Context, ref core.AssetRef) error {
	if err := s.client.AssetStateClear(ctx, ref); err != nil {
		return err
	}
	if name, ok := s.nameAfterWrite(ctx, ref); ok {
		s.obj.removePrefix(ctx, AssetPrefix(name))
	}
	return nil
}

// nameAfterWrite returns the name of the asset whose rows the API has just
// deleted: ref's name, or the declared asset with ref's uri. A failed
// lookup is logged (the objects stay until each key is set again).
func (s *AssetState) nameAfterWrite(ctx context.Context, ref core.AssetRef) (string, bool) {
	if ref.Name != "" {
		return ref.Name, true
	}
	name, err := s.declaredName(ctx, ref)
	if err != nil {
		s.obj.log.Warn("asset state deleted, but the asset's name could not be resolved to delete its objects; "+
			"they stay until each key is set again", "asset", ref.String(), "err", err)
		return "", false
	}
	return name, true
}

// declaredName returns the name of the asset ref names (by name, else by
// uri) among the concrete assets the task declares. An asset the task
// does not declare is refused with core.ErrForbidden before anything is
// written, as the API would refuse its write.
func (s *AssetState) declaredName(ctx context.Context, ref core.AssetRef) (string, error) {
	if ref.Name == "" && ref.URI == "" {
		return "", fmt.Errorf("asset state needs an asset name or uri, got %s: %w", ref, core.ErrInvalid)
	}
	declared, err := s.client.DeclaredAssets(ctx)
	if err != nil {
		return "", fmt.Errorf("resolve asset %s among the task's assets: %w", ref, err)
	}
	names := make([]string, len(declared))
	for i, d := range declared {
		if ref.Name != "" && d.Name == ref.Name || ref.Name == "" && d.URI == ref.URI {
			return d.Name, nil
		}
		names[i] = strconv.Quote(d.Name)
	}
	list := "none"
	if len(names) > 0 {
		list = strings.Join(names, ", ")
	}
	return "", fmt.Errorf("task %s may not write the state of asset %s: it is not one of the task's inlets or outlets (declared: %s): %w",
		s.client.Identity.TaskID, ref, list, core.ErrForbidden)
}
