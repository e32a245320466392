package statestore

import (
	"context"
	"fmt"

	"github.com/weirflow/weir/internal/audit"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/statevalue"
	"github.com/weirflow/weir/internal/store"
)

// EditRole is the role an admin edit of state needs (REST writes need it
// too; the admin CLI acts as core.RoleAdmin).
const EditRole = core.RoleOp

// auditActions are the audit log's actions of each kind's edits.
var auditActions = map[core.StateKind]map[string]string{
	core.StateTask:  {"set": audit.TaskStateSet, "delete": audit.TaskStateDelete, "clear": audit.TaskStateClear},
	core.StateAsset: {"set": audit.AssetStateSet, "delete": audit.AssetStateDelete, "clear": audit.AssetStateClear},
}

// AdminSet is a person's write of key in scope (REST API, admin CLI): actor
// must have EditRole; the scope must exist (core.ErrNotFound otherwise);
// the value is checked as Set checks it and recorded as written by the
// actor; the write and its audit entry (action task_state.set or
// asset_state.set, target the scope, detail the key and, for task state,
// the retention) commit together.
func (s *Service) AdminSet(ctx context.Context, actor core.Actor, scope core.StateScope, key string, raw []byte, r statevalue.Retention) (*core.StateEntry, error) {
	var e *core.StateEntry
	err := s.edit(ctx, actor, scope, "set", func(tx store.Store, scope core.StateScope) (string, error) {
		if name, ok := core.WatcherOfCursorKey(key); ok && scope.Kind == core.StateAsset && s.cfg.CheckCursor != nil {
			if err := s.cfg.CheckCursor(ctx, scope.AssetID, name, raw); err != nil {
				return "", err
			}
		}
		var err error
		e, err = s.set(ctx, tx, scope, key, raw, r, core.UserWriter(actor.Name))
		detail := "key=" + key
		if scope.Kind == core.StateTask {
			detail += " retention=" + r.String()
		}
		return detail, err
	})
	return e, err
}

// AdminDelete is a person's delete of key in scope, authorized and audited
// as AdminSet (detail: the key). Deleting an absent key is not an error.
func (s *Service) AdminDelete(ctx context.Context, actor core.Actor, scope core.StateScope, key string) error {
	if err := statevalue.CheckKey(key); err != nil {
		return err
	}
	return s.edit(ctx, actor, scope, "delete", func(tx store.Store, scope core.StateScope) (string, error) {
		return "key=" + key, s.backend(tx).Delete(ctx, scope, key)
	})
}

// AdminClear is a person's clear of every key of scope (of every map index
// of a task with allMapIndices) but an asset's watchers' cursors, which a
// clear would turn into every item reported again (a cursor is reset on
// its own: AdminDelete of its key, `weir assets watchers reset-cursor`);
// authorized and audited as AdminSet (detail, for task state:
// all_map_indices).
func (s *Service) AdminClear(ctx context.Context, actor core.Actor, scope core.StateScope, allMapIndices bool) error {
	return s.edit(ctx, actor, scope, "clear", func(tx store.Store, scope core.StateScope) (string, error) {
		detail := ""
		if scope.Kind == core.StateTask {
			detail = fmt.Sprintf("all_map_indices=%t", allMapIndices)
		}
		return detail, s.backend(tx).Clear(ctx, scope, Clearing{AllMapIndices: allMapIndices, KeepWatchers: true})
	})
}

// edit runs one admin edit: it authorizes actor, resolves scope, then in
// one transaction applies change (which returns the audit detail) and
// records it.
func (s *Service) edit(ctx context.Context, actor core.Actor, scope core.StateScope, op string,
	change func(tx store.Store, scope core.StateScope) (string, error)) error {
	if err := actor.Authorize(EditRole, op+" "+string(scope.Kind)+" state"); err != nil {
		return err
	}
	scope, err := s.Resolve(ctx, scope)
	if err != nil {
		return err
	}
	action := auditActions[scope.Kind][op]
	return s.st.WithTx(ctx, func(tx store.Store) error {
		detail, err := change(tx, scope)
		if err != nil {
			return err
		}
		return audit.Record(ctx, tx, s.clock.Now(), actor, action, scope.String(), detail)
	})
}
