package service

import (
	"context"
	"errors"
	"fmt"

	"github.com/weirflow/weir/internal/audit"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/secrets"
	"github.com/weirflow/weir/internal/store"
)

// validKey says whether s may be a variable key or a connection id
// (Airflow's: 1 to 250 letters, digits, '_', '-' or '.'). A loop, not
// `^[A-Za-z0-9_.\-]{1,250}$`: compiling that regexp (250 repeats) cost every
// weir process 2 ms at start.
func validKey(s string) bool {
	if s == "" || len(s) > 250 {
		return false
	}
	for _, c := range []byte(s) {
		letter := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
		if !letter && (c < '0' || c > '9') && c != '_' && c != '.' && c != '-' {
			return false
		}
	}
	return true
}

// MaxVariableBytes bounds a variable's value.
const MaxVariableBytes = 64 << 10

// VariableWrite says how SaveVariable treats an existing variable.
type VariableWrite struct {
	OnlyNew         bool // an existing key is a conflict (POST /variables, as Airflow)
	OnlyExisting    bool // a missing key is not found (PATCH)
	KeepDescription bool // an existing variable keeps its description
	KeepValue       bool // an existing variable keeps its value (an update of its description alone)
}

// SaveVariable stores a variable (docs/variables.md) as w says. Needs role
// op. Errors wrap core.ErrInvalid for a bad key or an oversized value (the
// message never echoes the value: it may be a secret), core.ErrConflict
// and core.ErrNotFound.
func (s *Service) SaveVariable(ctx context.Context, actor core.Actor, v core.Variable, w VariableWrite) error {
	if !validKey(v.Key) {
		return fmt.Errorf("variable key %q must be 1 to 250 letters, digits, '_', '-' or '.': %w", v.Key, core.ErrInvalid)
	}
	if len(v.Value) > MaxVariableBytes {
		return fmt.Errorf("variable %q: value is %d bytes, more than the %d allowed: %w", v.Key, len(v.Value), MaxVariableBytes, core.ErrInvalid)
	}
	c := &change{actor: actor, need: core.RoleOp, action: audit.VariableCreate, target: v.Key}
	return s.do(ctx, c, func(tx store.Store, _ *string) error {
		cur, err := tx.VariableGet(ctx, v.Key)
		if errors.Is(err, secrets.ErrUndecryptable) && !w.KeepValue {
			// A row that does not decrypt here exists all the same (and
			// is replaced: how a stray key's row is mended).
			err = nil
		}
		switch {
		case err == nil && w.OnlyNew:
			return fmt.Errorf("variable %q already exists; update it instead: %w", v.Key, core.ErrConflict)
		case err == nil:
			c.action = audit.VariableUpdate
			if w.KeepDescription {
				v.Description = cur.Description
			}
			if w.KeepValue {
				v.Value = cur.Value
			}
		case errors.Is(err, secrets.ErrUndecryptable) && w.KeepValue:
			return fmt.Errorf("variable %q: its value does not decrypt with this node's secrets key, so it cannot be kept; give a value to replace it: %w",
				v.Key, core.ErrConflict)
		case errors.Is(err, core.ErrNotFound) && w.OnlyExisting:
			return fmt.Errorf("variable %q: %w", v.Key, err)
		case !errors.Is(err, core.ErrNotFound):
			return fmt.Errorf("look up variable %q: %w", v.Key, err)
		}
		if err := tx.VariableUpsert(ctx, &v); err != nil {
			return fmt.Errorf("save variable %q: %w", v.Key, err)
		}
		return nil
	})
}

// DeleteVariable deletes a variable. Needs role op. Errors wrap
// core.ErrNotFound for a missing one.
func (s *Service) DeleteVariable(ctx context.Context, actor core.Actor, key string) error {
	c := &change{actor: actor, need: core.RoleOp, action: audit.VariableDelete, target: key}
	return s.do(ctx, c, func(tx store.Store, _ *string) error {
		if err := tx.VariableDelete(ctx, key); err != nil {
			return fmt.Errorf("delete variable %q: %w", key, err)
		}
		return nil
	})
}
