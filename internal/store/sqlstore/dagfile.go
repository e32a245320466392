package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/weirflow/weir/internal/store"
)

// DagFileSet records (or replaces) what the last parse of a DAG file gave.
func (s *Store) DagFileSet(ctx context.Context, f *store.DagFile) error {
	ids, err := json.Marshal(nonNilStrings(f.DagIDs))
	if err != nil {
		return fmt.Errorf("record the parse of %s: encode dag ids: %w", f.Fileloc, err)
	}
	_, err = s.writer().ExecContext(ctx, qDagFileSet, f.Fileloc, f.Parser, f.Sum, string(ids), f.DAGs, f.Error, micros(f.ParsedAt))
	return s.wrap(err, "record the parse of %s", f.Fileloc)
}

// DagFileList lists what the last parse of every DAG file gave, by path
// (without the DAGs when p.NoDAGs).
func (s *Store) DagFileList(ctx context.Context, p *store.DagFileListParams) ([]store.DagFile, error) {
	q := qDagFileList
	if p != nil && p.NoDAGs {
		q = qDagFileListNoDAGs
	}
	return queryAll(ctx, s, "list dag files", q, func(r scanner) (store.DagFile, error) {
		f, err := scanDagFile(r)
		return *f, err
	})
}

// DagFileGet returns what the last parse of one DAG file gave.
func (s *Store) DagFileGet(ctx context.Context, fileloc string) (*store.DagFile, error) {
	f, err := scanDagFile(s.reader().QueryRowContext(ctx, qDagFileGet, fileloc))
	if err != nil {
		return nil, s.wrap(err, "get the parse of %s", fileloc)
	}
	return f, nil
}

func scanDagFile(r scanner) (*store.DagFile, error) {
	var (
		f   store.DagFile
		ids string
		at  int64
	)
	if err := r.Scan(&f.Fileloc, &f.Parser, &f.Sum, &ids, &f.DAGs, &f.Error, &at); err != nil {
		return &f, err
	}
	f.ParsedAt = fromMicros(at)
	if err := json.Unmarshal([]byte(ids), &f.DagIDs); err != nil {
		return &f, fmt.Errorf("decode dag ids of %s: %w", f.Fileloc, err)
	}
	return &f, nil
}

// DagFileDelete removes the record of a DAG file (no error when absent).
func (s *Store) DagFileDelete(ctx context.Context, fileloc string) error {
	_, err := s.writer().ExecContext(ctx, qDagFileDelete, fileloc)
	return s.wrap(err, "delete the parse of %s", fileloc)
}
