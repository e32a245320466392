package sqlstore

import (
	"context"

	"github.com/weirflow/weir/internal/store"
)

// DagFileSet records (or replaces) what the last parse of a DAG file gave.
func (s *Store) DagFileSet(ctx context.Context, f *store.DagFile) error {
	_, err := s.writer().ExecContext(ctx, qDagFileSet, f.Fileloc, f.Parser, f.Sum, f.DAGs, f.Error, micros(f.ParsedAt))
	return s.wrap(err, "record the parse of %s", f.Fileloc)
}

// DagFileList lists what the last parse of every DAG file gave, by path.
func (s *Store) DagFileList(ctx context.Context) ([]store.DagFile, error) {
	return queryAll(ctx, s, "list dag files", qDagFileList, func(r scanner) (store.DagFile, error) {
		var (
			f  store.DagFile
			at int64
		)
		err := r.Scan(&f.Fileloc, &f.Parser, &f.Sum, &f.DAGs, &f.Error, &at)
		f.ParsedAt = fromMicros(at)
		return f, err
	})
}

// DagFileDelete removes the record of a DAG file (no error when absent).
func (s *Store) DagFileDelete(ctx context.Context, fileloc string) error {
	_, err := s.writer().ExecContext(ctx, qDagFileDelete, fileloc)
	return s.wrap(err, "delete the parse of %s", fileloc)
}
