package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// DagSync records a parsed DAG and adds a dag_version when its hash changed.
func (s *Store) DagSync(ctx context.Context, p *store.DagSyncParams) (versionID int64, change store.DagSyncChange, err error) {
	dagID := p.Spec.DagID
	spec, err := json.Marshal(p.Spec)
	if err != nil {
		return 0, 0, fmt.Errorf("sync dag %s: encode spec: %w", dagID, err)
	}
	tags, err := json.Marshal(nonNilStrings(p.Spec.Tags))
	if err != nil {
		return 0, 0, fmt.Errorf("sync dag %s: encode tags: %w", dagID, err)
	}
	err = s.inTx(ctx, func(tx *Store) error {
		var (
			active  bool
			derived string
		)
		err := tx.tx.QueryRowContext(ctx, qDagExists, dagID).Scan(&active, &derived)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			_, err = tx.tx.ExecContext(ctx, qDagInsert, dagID, p.Spec.FileLoc, p.Paused,
				p.Spec.Description, p.Spec.ScheduleSummary(), string(tags), micros(p.Now), p.Deriver)
		case err == nil:
			_, err = tx.tx.ExecContext(ctx, qDagUpdate, dagID, p.Spec.FileLoc,
				p.Spec.Description, p.Spec.ScheduleSummary(), string(tags), micros(p.Now), p.Deriver)
		}
		if err != nil {
			return tx.wrap(err, "sync dag %s", dagID)
		}
		latest, err := tx.DagVersionLatest(ctx, dagID)
		if err != nil && !errors.Is(err, core.ErrNotFound) {
			return err
		}
		if latest != nil && latest.Hash == p.Hash {
			versionID, change = latest.ID, store.DagRederive
			if active && p.Deriver != "" && derived == p.Deriver {
				change = store.DagUnchanged
			}
			return nil
		}
		next := 1
		if latest != nil {
			next = latest.Version + 1
		}
		if err := tx.tx.QueryRowContext(ctx, qDagVersionInsert, dagID, next, p.Hash, string(spec),
			micros(p.Now)).Scan(&versionID); err != nil {
			return tx.wrap(err, "add version %d of dag %s", next, dagID)
		}
		change = store.DagNewVersion
		_, err = tx.tx.ExecContext(ctx, qDagSetLatest, dagID, versionID)
		return tx.wrap(err, "set latest version of dag %s", dagID)
	})
	if err != nil {
		return 0, 0, err
	}
	return versionID, change, nil
}

func nonNilStrings(tags []string) []string {
	if tags == nil {
		return []string{}
	}
	return tags
}

// DagGet returns one DAG's row.
func (s *Store) DagGet(ctx context.Context, dagID string) (*core.DagModel, error) {
	d, err := scanDag(s.reader().QueryRowContext(ctx, qDagGet, dagID))
	if err != nil {
		return nil, s.wrap(err, "get dag %s", dagID)
	}
	return d, nil
}

// DagList lists a page of DAGs (by id unless p.OrderBy says otherwise).
func (s *Store) DagList(ctx context.Context, p *store.DagListParams) ([]core.DagModel, error) {
	return listPage(ctx, s, "list dags", qDagList, dagFilter(p), &dagOrder, p.Page, scanDag)
}

// DagCount counts the DAGs DagList would list without paging.
func (s *Store) DagCount(ctx context.Context, p *store.DagListParams) (int, error) {
	return s.count(ctx, "count dags", qDagCount, dagFilter(p))
}

// dagFilter is the WHERE clause of DagList and DagCount.
func dagFilter(p *store.DagListParams) *builder {
	var b builder
	if p.OnlyActive {
		b.where("is_active = TRUE")
	}
	if p.Paused != nil {
		b.where("is_paused = ?", *p.Paused)
	}
	in(&b, "dag_id", p.DagIDs)
	b.containsFold("dag_id", p.Search)
	if len(p.Tags) > 0 {
		// tags is a JSON array: a tag's JSON string, quotes included,
		// matches one whole element.
		conds, vals := make([]string, len(p.Tags)), make([]any, len(p.Tags))
		for i, tag := range p.Tags {
			quoted, _ := json.Marshal(tag) // a string always encodes
			conds[i], vals[i] = `tags LIKE ? ESCAPE '\'`, "%"+likeEscape(string(quoted))+"%"
		}
		join := " OR "
		if p.AllTags {
			join = " AND "
		}
		b.where("("+strings.Join(conds, join)+")", vals...)
	}
	return &b
}

// likeEscape escapes LIKE's wildcards (and its escape character) in s.
// containsFold adds the condition that column col contains text, ignoring
// case (% and _ in text are taken literally); none for an empty text.
func (b *builder) containsFold(col, text string) {
	if text != "" {
		b.where(containsCond(col, text))
	}
}

// containsCond is the condition of containsFold, with its one "?", and
// its value.
func containsCond(col, text string) (cond string, arg any) {
	return `LOWER(` + col + `) LIKE ? ESCAPE '\'`, "%" + likeEscape(strings.ToLower(text)) + "%"
}

// within adds the conditions that expression col is in range r.
func (b *builder) within(col string, r store.TimeRange) {
	if r.GTE != nil {
		b.where(col+" >= ?", micros(*r.GTE))
	}
	if r.LTE != nil {
		b.where(col+" <= ?", micros(*r.LTE))
	}
}

func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

type scanner interface{ Scan(dest ...any) error }

func scanDag(r scanner) (*core.DagModel, error) {
	var (
		d        core.DagModel
		tags     string
		latest   sql.NullInt64
		next     sql.NullInt64
		lastPars int64
	)
	if err := r.Scan(&d.DagID, &d.FileLoc, &d.IsPaused, &d.IsActive, &d.Description, &d.Schedule,
		&tags, &latest, &next, &lastPars); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(tags), &d.Tags); err != nil {
		return nil, fmt.Errorf("decode tags of dag %s: %w", d.DagID, err)
	}
	d.LatestVersion = latest.Int64
	d.NextRunAfter = ptrMicros(next)
	d.LastParsedTime = fromMicros(lastPars)
	return &d, nil
}

// collect scans every row and closes rows.
func collect[T any](rows *sql.Rows, scan func(*sql.Rows) (T, error)) ([]T, error) {
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// scanString reads a row of one text column (for collect).
func scanString(r *sql.Rows) (string, error) {
	var v string
	err := r.Scan(&v)
	return v, err
}

// DagSetPaused pauses or unpauses a DAG.
func (s *Store) DagSetPaused(ctx context.Context, dagID string, paused bool) error {
	return s.execOne(ctx, "set paused of dag "+dagID, qDagSetPaused, dagID, paused)
}

// DagSetNextRunAfter records when the scheduler should next look at the DAG.
func (s *Store) DagSetNextRunAfter(ctx context.Context, dagID string, at *time.Time) error {
	return s.execOne(ctx, "set next run of dag "+dagID, qDagSetNextRun, dagID, nullMicros(at))
}

// execOne runs a write that must affect a row; ErrNotFound when none.
func (s *Store) execOne(ctx context.Context, what, query string, args ...any) error {
	res, err := s.writer().ExecContext(ctx, query, args...)
	return s.affectedOne(res, err, what)
}

// affectedOne checks the result of a write that must affect a row: the
// write's error wrapped with what, or ErrNotFound when no row changed.
func (s *Store) affectedOne(res sql.Result, err error, what string) error {
	if err != nil {
		return s.wrap(err, "%s", what)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return s.wrap(err, "%s", what)
	}
	if n == 0 {
		return fmt.Errorf("%s: %w", what, core.ErrNotFound)
	}
	return nil
}

// DagDeactivateMissing marks inactive every active DAG not in Keep.
func (s *Store) DagDeactivateMissing(ctx context.Context, p *store.DagDeactivateParams) error {
	var b builder
	cond := ""
	if len(p.Keep) > 0 {
		cond = " AND dag_id NOT IN (" + list(&b, p.Keep) + ")"
	}
	_, err := s.writer().ExecContext(ctx, fmt.Sprintf(qDagDeactivate, cond), b.args...)
	return s.wrap(err, "deactivate missing dags")
}

// DagVersionGet returns one version with its spec.
func (s *Store) DagVersionGet(ctx context.Context, id int64) (*core.DagVersion, error) {
	v, err := scanVersion(s.reader().QueryRowContext(ctx, qDagVersionGet, id))
	if err != nil {
		return nil, s.wrap(err, "get dag version %d", id)
	}
	return v, nil
}

// DagVersionLatest returns a DAG's newest version.
func (s *Store) DagVersionLatest(ctx context.Context, dagID string) (*core.DagVersion, error) {
	v, err := scanVersion(s.reader().QueryRowContext(ctx, qDagVersionLatest, dagID))
	if err != nil {
		return nil, s.wrap(err, "get latest version of dag %s", dagID)
	}
	return v, nil
}

func scanVersion(r scanner) (*core.DagVersion, error) {
	var (
		v       core.DagVersion
		spec    string
		created int64
	)
	if err := r.Scan(&v.ID, &v.DagID, &v.Version, &v.Hash, &spec, &created); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(spec), &v.Spec); err != nil {
		return nil, fmt.Errorf("decode spec of dag version %d: %w", v.ID, err)
	}
	v.CreatedAt = fromMicros(created)
	return &v, nil
}

// ImportErrorSet records (or replaces) the import error of one file.
func (s *Store) ImportErrorSet(ctx context.Context, filename, message string, at time.Time) error {
	_, err := s.writer().ExecContext(ctx, qImportErrorSet, filename, message, micros(at))
	return s.wrap(err, "record import error of %s", filename)
}

// ImportErrorDelete removes the import error of one file (no error when absent).
func (s *Store) ImportErrorDelete(ctx context.Context, filename string) error {
	_, err := s.writer().ExecContext(ctx, qImportErrorDelete, filename)
	return s.wrap(err, "delete import error of %s", filename)
}

// ImportErrorGet returns one import error by id.
func (s *Store) ImportErrorGet(ctx context.Context, id int64) (*core.ImportError, error) {
	e, err := scanImportError(s.reader().QueryRowContext(ctx, qImportErrorGet, id))
	if err != nil {
		return nil, s.wrap(err, "get import error %d", id)
	}
	return e, nil
}

// ImportErrorList lists a page of import errors (by filename by default).
func (s *Store) ImportErrorList(ctx context.Context, p *store.ImportErrorListParams) ([]core.ImportError, error) {
	return listPage(ctx, s, "list import errors", qImportErrorList, &builder{}, &importErrorOrder, p.Page, scanImportError)
}

// ImportErrorCount counts the import errors.
func (s *Store) ImportErrorCount(ctx context.Context, _ *store.ImportErrorListParams) (int, error) {
	return s.count(ctx, "count import errors", qImportErrorCount, &builder{})
}

func scanImportError(r scanner) (*core.ImportError, error) {
	var (
		e  core.ImportError
		at int64
	)
	if err := r.Scan(&e.ID, &e.Filename, &e.Message, &at); err != nil {
		return nil, err
	}
	e.Timestamp = fromMicros(at)
	return &e, nil
}
