package sqlstore

import (
	"context"
	"fmt"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// The variable queries. Values are stored sealed by the secrets box, bound
// to the key, as connection URIs are.
const (
	qVarUpsert = `INSERT INTO variable (key, val, description) VALUES ($1, $2, $3)
		ON CONFLICT (key) DO UPDATE SET val = excluded.val, description = excluded.description`
	qVarGet    = `SELECT key, val, description FROM variable WHERE key = $1`
	qVarList   = `SELECT key, val, description FROM variable%s%s%s`
	qVarCount  = `SELECT COUNT(*) FROM variable%s`
	qVarDelete = `DELETE FROM variable WHERE key = $1`
)

// variableAAD binds a sealed value to its key (and apart from connections).
func variableAAD(key string) string { return "variable:" + key }

// VariableUpsert creates or replaces a variable, sealing its value.
func (s *Store) VariableUpsert(ctx context.Context, v *core.Variable) error {
	if s.box == nil {
		return fmt.Errorf("save variable %s: no secrets key is configured to encrypt it: %w", v.Key, core.ErrInvalid)
	}
	_, err := s.writer().ExecContext(ctx, qVarUpsert, v.Key, s.box.Seal(v.Value, variableAAD(v.Key)), v.Description)
	return s.wrap(err, "save variable %s", v.Key)
}

// VariableGet returns a variable (value unsealed) or ErrNotFound.
func (s *Store) VariableGet(ctx context.Context, key string) (*core.Variable, error) {
	var v core.Variable
	if err := s.reader().QueryRowContext(ctx, qVarGet, key).Scan(&v.Key, &v.Value, &v.Description); err != nil {
		return nil, s.wrap(err, "get variable %s", key)
	}
	return &v, s.unsealVariable(&v)
}

// VariableList lists a page of variables by key, values unsealed; a row
// that does not decrypt here is listed with Undecryptable set.
func (s *Store) VariableList(ctx context.Context, p *store.VariableListParams) ([]core.Variable, error) {
	return listPage(ctx, s, "list variables", qVarList, searched("key", p.Search), &variableOrder, p.Page,
		func(r scanner) (*core.Variable, error) {
			var v core.Variable
			if err := r.Scan(&v.Key, &v.Value, &v.Description); err != nil {
				return nil, err
			}
			var err error
			v.Undecryptable, err = s.openListed(&variableValues, v.Key, &v.Value)
			return &v, err
		})
}

// VariableCount counts every variable.
func (s *Store) VariableCount(ctx context.Context, p *store.VariableListParams) (int, error) {
	return s.count(ctx, "count variables", qVarCount, searched("key", p.Search))
}

// VariableDelete removes a variable; ErrNotFound when absent.
func (s *Store) VariableDelete(ctx context.Context, key string) error {
	return s.execOne(ctx, "delete variable "+key, qVarDelete, key)
}

// unsealVariable replaces a stored value by the plain one.
func (s *Store) unsealVariable(v *core.Variable) (err error) {
	v.Value, err = s.open(&variableValues, v.Key, v.Value)
	return err
}
