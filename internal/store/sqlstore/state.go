package sqlstore

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// stateTable is what differs between the state kinds: one table each, with
// its own columns, the bind values that name a scope, the filters a list
// takes and how a row becomes a core.StateEntry. Everything else (the
// StateStore methods below) is shared; a new kind adds a stateTable.
type stateTable struct {
	// cols, from: the SELECT list and FROM clause every read uses.
	cols, from string
	// order maps the list's order_by fields to columns; its key, the
	// table's unique key, ends every order so pages are stable.
	order orderSpec
	// get selects one key: scope's bind values, then the key.
	get string
	// stale lists ($1 = cutoff, $2 = limit) and deleteStale,
	// deleteStaleBatch delete ($2 = limit) what cleanup removes.
	stale, deleteStale, deleteStaleBatch string
	// scopeArgs returns the bind values naming sc in get.
	scopeArgs func(sc core.StateScope) ([]any, error)
	// set returns the upsert and its bind values.
	set func(p *store.StateSetParams) (string, []any, error)
	// del returns the delete of one key or of the scope.
	del func(p *store.StateDeleteParams) (string, []any, error)
	// filter adds a list's conditions.
	filter func(b *builder, p *store.StateListParams) error
	scan   func(r scanner) (core.StateEntry, error)
}

// stateTables holds every kind's table.
var stateTables = map[core.StateKind]*stateTable{
	core.StateTask:  &taskStateTable,
	core.StateAsset: &assetStateTable,
}

// tableOf returns kind's table; ErrInvalid for an unknown kind.
func tableOf(kind core.StateKind) (*stateTable, error) {
	t, ok := stateTables[kind]
	if !ok {
		return nil, fmt.Errorf("unknown state scope kind %q: %w", kind, core.ErrInvalid)
	}
	return t, nil
}

// knownWriterKinds are the writer kinds a row may record.
var knownWriterKinds = map[string]bool{core.StateWriterTask: true, core.StateWriterWatcher: true,
	core.StateWriterAPI: true, core.StateWriterUser: true}

// StateSet upserts one key; ErrNotFound when the scope's run or asset does
// not exist, ErrInvalid for a value that is not JSON or an unknown writer.
func (s *Store) StateSet(ctx context.Context, p *store.StateSetParams) error {
	what := fmt.Sprintf("set %s state %q of %s", p.Scope.Kind, p.Key, p.Scope)
	t, err := tableOf(p.Scope.Kind)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if !json.Valid(p.Value) {
		return fmt.Errorf("%s: value is not valid JSON: %w", what, core.ErrInvalid)
	}
	if !knownWriterKinds[p.By.Kind] {
		return fmt.Errorf("%s: writer kind %q is not one of task, watcher, api, user: %w", what, p.By.Kind, core.ErrInvalid)
	}
	query, args, err := t.set(p)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if p.Object == "" {
		res, err := s.writer().ExecContext(ctx, query, args...)
		return s.affectedOne(res, err, what)
	}
	return s.inTx(ctx, func(tx *Store) error {
		if err := tx.consumeStateObject(ctx, p.Object); err != nil {
			// A repeated write (a retry after a lost answer) finds its
			// reference stored already.
			if cur, gerr := tx.StateGet(ctx, p.Scope, p.Key); gerr != nil || !bytes.Equal(cur.Value, p.Value) {
				return fmt.Errorf("%s: %w", what, err)
			}
		}
		res, err := tx.tx.ExecContext(ctx, query, args...)
		return tx.affectedOne(res, err, what)
	})
}

// StateGet returns one entry or ErrNotFound.
func (s *Store) StateGet(ctx context.Context, sc core.StateScope, key string) (*core.StateEntry, error) {
	t, err := tableOf(sc.Kind)
	var args []any
	if err == nil {
		args, err = t.scopeArgs(sc)
	}
	if err != nil {
		return nil, fmt.Errorf("get %s state %q of %s: %w", sc.Kind, key, sc, err)
	}
	e, err := t.scan(s.reader().QueryRowContext(ctx, t.get, append(args, key)...))
	if err != nil {
		return nil, s.wrap(err, "get %s state %q of %s", sc.Kind, key, sc)
	}
	return &e, nil
}

// StateList returns one page of entries.
func (s *Store) StateList(ctx context.Context, p *store.StateListParams) ([]core.StateEntry, error) {
	t, b, err := stateFilter(p)
	if err != nil {
		return nil, err
	}
	scan := func(r scanner) (*core.StateEntry, error) {
		e, err := t.scan(r)
		return &e, err
	}
	out, err := listPage(ctx, s, "list "+string(p.Kind)+" state", "SELECT "+t.cols+" FROM "+t.from+"%s%s%s",
		&b, &t.order, p.Page, scan)
	if out == nil && err == nil {
		out = []core.StateEntry{}
	}
	return out, err
}

// StateCount counts the entries a list selects.
func (s *Store) StateCount(ctx context.Context, p *store.StateListParams) (int, error) {
	t, b, err := stateFilter(p)
	if err != nil {
		return 0, err
	}
	return s.count(ctx, "count "+string(p.Kind)+" state", "SELECT COUNT(*) FROM "+t.from+"%s", &b)
}

// stateFilter returns the table and conditions of a list.
func stateFilter(p *store.StateListParams) (*stateTable, builder, error) {
	var b builder
	t, err := tableOf(p.Kind)
	if err == nil {
		err = t.filter(&b, p)
	}
	if err != nil {
		return nil, b, fmt.Errorf("list %s state: %w", p.Kind, err)
	}
	return t, b, nil
}

// StateDelete deletes one key, or clears a scope when Key is empty.
func (s *Store) StateDelete(ctx context.Context, p *store.StateDeleteParams) (int64, error) {
	what := fmt.Sprintf("delete %s state of %s", p.Scope.Kind, p.Scope)
	t, err := tableOf(p.Scope.Kind)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", what, err)
	}
	query, args, err := t.del(p)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", what, err)
	}
	res, err := s.writer().ExecContext(ctx, query, args...)
	if err != nil {
		return 0, s.wrap(err, "%s", what)
	}
	n, err := res.RowsAffected()
	return n, s.wrap(err, "%s", what)
}

// StateStale lists up to p.Limit (0 = all) entries cleanup would delete.
func (s *Store) StateStale(ctx context.Context, p *store.StateStaleParams) ([]core.StateEntry, error) {
	t, err := tableOf(p.Kind)
	if err != nil {
		return nil, err
	}
	limit := p.Limit
	if limit <= 0 {
		limit = 1 << 31
	}
	return queryAll(ctx, s, "list stale "+string(p.Kind)+" state", t.stale, t.scan, micros(p.Before), limit)
}

// StateDeleteStale deletes up to p.Limit (0 = all, one statement) of the
// entries StateStale lists and returns how many went.
func (s *Store) StateDeleteStale(ctx context.Context, p *store.StateStaleParams) (int64, error) {
	t, err := tableOf(p.Kind)
	if err != nil {
		return 0, err
	}
	what := "delete stale " + string(p.Kind) + " state"
	var res sql.Result
	if p.Limit <= 0 {
		res, err = s.writer().ExecContext(ctx, t.deleteStale, micros(p.Before))
	} else {
		res, err = s.writer().ExecContext(ctx, t.deleteStaleBatch, micros(p.Before), p.Limit)
	}
	if err != nil {
		return 0, s.wrap(err, "%s", what)
	}
	n, err := res.RowsAffected()
	return n, s.wrap(err, "%s", what)
}

// StateTry returns the scope, try number, state and DAG version of try id.
func (s *Store) StateTry(ctx context.Context, id string) (*store.StateTry, error) {
	t := store.StateTry{Scope: core.StateScope{Kind: core.StateTask}}
	var state string
	err := s.reader().QueryRowContext(ctx, qStateTry, id).Scan(&t.Scope.DagID, &t.Scope.RunID, &t.Scope.TaskID,
		&t.Scope.MapIndex, &t.TryNumber, &state, &t.DagVersionID)
	if err != nil {
		return nil, s.wrap(err, "get task instance %s", id)
	}
	t.State = core.TIState(state)
	return &t, nil
}

// clearTaskStateOfTry deletes the task state of the instance whose current
// try is id (inside TaskInstanceFinish's transaction).
func (s *Store) clearTaskStateOfTry(ctx context.Context, id string) error {
	_, err := s.writer().ExecContext(ctx, qTaskStateClearTI, id)
	return s.wrap(err, "clear task state of task instance %s", id)
}

// invalidf is an error wrapping core.ErrInvalid.
func invalidf(format string, args ...any) error {
	return fmt.Errorf(format+": %w", append(args, core.ErrInvalid)...)
}

// queryAll runs a read query and scans every row with scan; never nil.
func queryAll[T any](ctx context.Context, s *Store, what, query string, scan func(scanner) (T, error), args ...any) ([]T, error) {
	rows, err := s.reader().QueryContext(ctx, query, args...)
	if err != nil {
		return nil, s.wrap(err, "%s", what)
	}
	out, err := collect(rows, func(r *sql.Rows) (T, error) { return scan(r) })
	if out == nil {
		out = []T{}
	}
	return out, s.wrap(err, "%s", what)
}
