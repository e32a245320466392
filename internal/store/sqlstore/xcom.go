package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// XComSet stores (or replaces) one value; ErrNotFound when the run does not
// exist, ErrInvalid when the value is not JSON.
func (s *Store) XComSet(ctx context.Context, x *core.XCom) error {
	what := fmt.Sprintf("set xcom %s of %s/%s/%s[%d]", x.Key, x.DagID, x.RunID, x.TaskID, x.MapIndex)
	if !json.Valid(x.Value) {
		return fmt.Errorf("%s: value is not valid JSON: %w", what, core.ErrInvalid)
	}
	return s.execOne(ctx, what, qXComSet, x.DagID, x.RunID, x.TaskID, x.MapIndex, x.Key, string(x.Value),
		micros(x.Timestamp))
}

// XComGet returns one value or ErrNotFound.
func (s *Store) XComGet(ctx context.Context, dagID, runID, taskID string, mapIndex int, key string) (*core.XCom, error) {
	x, err := scanXCom(s.reader().QueryRowContext(ctx, qXComGet, dagID, runID, taskID, mapIndex, key))
	if err != nil {
		return nil, s.wrap(err, "get xcom %s of %s/%s/%s[%d]", key, dagID, runID, taskID, mapIndex)
	}
	return x, nil
}

// XComList lists a page of a run's values (by task, map index and key
// unless p.OrderBy says otherwise).
func (s *Store) XComList(ctx context.Context, p *store.XComListParams) ([]core.XCom, error) {
	what := fmt.Sprintf("list xcoms of %s/%s", p.DagID, p.RunID)
	return listPage(ctx, s, what, qXComList, xcomFilter(p), &xcomOrder, p.Page, scanXCom)
}

// XComCount counts the values XComList would list without paging.
func (s *Store) XComCount(ctx context.Context, p *store.XComListParams) (int, error) {
	return s.count(ctx, fmt.Sprintf("count xcoms of %s/%s", p.DagID, p.RunID), qXComCount, xcomFilter(p))
}

// xcomFilter is the WHERE clause of XComList and XComCount.
func xcomFilter(p *store.XComListParams) *builder {
	var b builder
	switch {
	case p.DagID != "" && p.RunID != "":
		b.where(qXComListRun, p.DagID, p.RunID)
	case p.DagID != "":
		b.where("dag_id = ?", p.DagID)
	case p.RunID != "":
		b.where("run_id = ?", p.RunID)
	}
	if p.TaskID != "" {
		b.where("task_id = ?", p.TaskID)
	}
	if p.MapIndex != nil {
		b.where("map_index = ?", *p.MapIndex)
	}
	if p.Key != "" {
		b.where("key = ?", p.Key)
	}
	return &b
}

// XComClear deletes the values of one task instance.
func (s *Store) XComClear(ctx context.Context, dagID, runID, taskID string, mapIndex int) error {
	_, err := s.writer().ExecContext(ctx, qXComClear, dagID, runID, taskID, mapIndex)
	return s.wrap(err, "clear xcoms of %s/%s/%s[%d]", dagID, runID, taskID, mapIndex)
}

// XComDelete deletes one value; an absent value is not an error.
func (s *Store) XComDelete(ctx context.Context, dagID, runID, taskID string, mapIndex int, key string) error {
	_, err := s.writer().ExecContext(ctx, qXComDelete, dagID, runID, taskID, mapIndex, key)
	return s.wrap(err, "delete xcom %s of %s/%s/%s[%d]", key, dagID, runID, taskID, mapIndex)
}

func scanXCom(r scanner) (*core.XCom, error) {
	var (
		x     core.XCom
		value string
		at    int64
	)
	if err := r.Scan(&x.DagID, &x.RunID, &x.TaskID, &x.MapIndex, &x.Key, &value, &at); err != nil {
		return nil, err
	}
	x.Value = json.RawMessage(value)
	x.Timestamp = fromMicros(at)
	return &x, nil
}
