package sqlstore

import (
	"context"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// DagWarningSet records (or replaces) a DAG's warning of one type.
func (s *Store) DagWarningSet(ctx context.Context, w *core.DagWarning) error {
	_, err := s.writer().ExecContext(ctx, qDagWarningSet, w.DagID, w.WarningType, w.Message, micros(w.Timestamp))
	return s.wrap(err, "record %s warning of dag %s", w.WarningType, w.DagID)
}

// DagWarningDelete removes a DAG's warning of one type (no error when absent).
func (s *Store) DagWarningDelete(ctx context.Context, dagID, warningType string) error {
	_, err := s.writer().ExecContext(ctx, qDagWarningDelete, dagID, warningType)
	return s.wrap(err, "delete %s warning of dag %s", warningType, dagID)
}

// DagWarningList lists a page of DAG warnings (by dag_id and type by default).
func (s *Store) DagWarningList(ctx context.Context, p *store.DagWarningListParams) ([]core.DagWarning, error) {
	return listPage(ctx, s, "list dag warnings", qDagWarningList, dagWarningFilter(p), &dagWarningOrder, p.Page, scanDagWarning)
}

// DagWarningCount counts the DAG warnings DagWarningList would list.
func (s *Store) DagWarningCount(ctx context.Context, p *store.DagWarningListParams) (int, error) {
	return s.count(ctx, "count dag warnings", qDagWarningCount, dagWarningFilter(p))
}

func dagWarningFilter(p *store.DagWarningListParams) *builder {
	b := &builder{}
	if p.DagID != "" {
		b.where("dag_id = ?", p.DagID)
	}
	if p.WarningType != "" {
		b.where("warning_type = ?", p.WarningType)
	}
	return b
}

func scanDagWarning(r scanner) (*core.DagWarning, error) {
	var (
		w  core.DagWarning
		at int64
	)
	if err := r.Scan(&w.DagID, &w.WarningType, &w.Message, &at); err != nil {
		return nil, err
	}
	w.Timestamp = fromMicros(at)
	return &w, nil
}
