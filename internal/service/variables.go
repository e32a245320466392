package service

import (
	"context"
	"errors"
	"fmt"
	"regexp"

	"github.com/weirflow/weir/internal/audit"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// variableKeyPattern is what a variable key may be (Airflow's: at most 250
// characters).
var variableKeyPattern = regexp.MustCompile(`^[A-Za-z0-9_.\-]{1,250}$`)

// MaxVariableBytes bounds a variable's value.
const MaxVariableBytes = 64 << 10

// SaveVariable stores a variable (docs/variables.md). With replace an
// existing one is overwritten (PATCH, `weir variables set`); without, it
// is a conflict (POST /variables, as Airflow). Needs role op. Errors wrap
// core.ErrInvalid for a bad key or an oversized value (the message never
// echoes the value: it may be a secret) and core.ErrConflict.
func (s *Service) SaveVariable(ctx context.Context, actor core.Actor, v core.Variable, replace bool) error {
	if !variableKeyPattern.MatchString(v.Key) {
		return fmt.Errorf("variable key %q must be 1 to 250 letters, digits, '_', '-' or '.': %w", v.Key, core.ErrInvalid)
	}
	if len(v.Value) > MaxVariableBytes {
		return fmt.Errorf("variable %q: value is %d bytes, more than the %d allowed: %w", v.Key, len(v.Value), MaxVariableBytes, core.ErrInvalid)
	}
	c := &change{actor: actor, need: core.RoleOp, action: audit.VariableCreate, target: v.Key}
	return s.do(ctx, c, func(tx store.Store, _ *string) error {
		switch _, err := tx.VariableGet(ctx, v.Key); {
		case err == nil && !replace:
			return fmt.Errorf("variable %q already exists; update it instead: %w", v.Key, core.ErrConflict)
		case err == nil:
			c.action = audit.VariableUpdate
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
