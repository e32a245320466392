package sqlwatch

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/weirflow/weir/internal/operator"
	"github.com/weirflow/weir/internal/trigger"
)

// source is what the watcher reads: a table or a query, and the two
// columns its cursor orders by.
type source struct {
	from             string // a quoted table name, or "(query) AS weir_src"
	updated, key     string // quoted column names
	updName, keyName string // as given
}

// newSource checks table or query and the cursor columns.
func newSource(k kwargs) (source, error) {
	var s source
	switch {
	case k.Table != nil && k.Query != nil:
		return s, trigger.Invalid("table", "cannot be given with query (watch a table, or a query's result)")
	case k.Table != nil:
		parts := strings.Split(*k.Table, ".")
		for i, p := range parts {
			if len(parts) > 2 || !identifier.MatchString(p) {
				return s, trigger.Invalid("table", "must be a table name, optionally schema.table (letters, digits, _ and $), got %q", *k.Table)
			}
			parts[i] = quote(p)
		}
		s.from = strings.Join(parts, ".")
	case k.Query != nil:
		q := strings.TrimSpace(strings.TrimRight(strings.TrimSpace(*k.Query), ";"))
		if q == "" {
			return s, trigger.Invalid("query", "must not be empty")
		}
		s.from = "(" + q + ") AS weir_src"
	default:
		return s, trigger.Invalid("table", "or query is required (the rows to watch)")
	}
	for _, c := range []struct {
		name string
		v    *string
		out  *string
	}{{"updated_column", k.UpdatedColumn, &s.updName}, {"key_column", k.KeyColumn, &s.keyName}} {
		if c.v == nil {
			return s, trigger.Invalid(c.name, "is required (the cursor orders rows by updated_column, then key_column)")
		}
		v, err := column(c.name, c.v)
		if err != nil {
			return s, err
		}
		*c.out = v
	}
	s.updated, s.key = quote(s.updName), quote(s.keyName)
	return s, nil
}

func quote(id string) string { return `"` + id + `"` }

// dialect is the one difference between the engines the watcher reads: how
// a cursor column is selected so that its value, bound back as a
// parameter, compares exactly as the column does.
type dialect int

const (
	postgres dialect = iota
	// sqlite selects the cursor columns as +col: the value keeps its
	// storage class (the driver would turn a DATETIME column's text into a
	// time, whose text is not the stored one).
	sqlite
)

func (d dialect) cursorExpr(col string) string {
	if d == sqlite {
		return "+" + col
	}
	return col
}

// The aliases of the cursor columns in every statement; they are not part
// of the payload.
const (
	aliasUpdated = "weir_cursor_updated"
	aliasKey     = "weir_cursor_key"
)

// row is one row read: its cursor pair (JSON-ready values) and the row as
// an event payload.
type row struct {
	updated, key any
	payload      map[string]any
}

// reader runs the watcher's statements on one database.
type reader struct {
	db  *sql.DB
	d   dialect
	src source
}

// after reads up to limit rows whose (updated, key) is greater than the
// pair given (nil = from the first row), in cursor order. Rows whose
// updated or key is NULL are never read.
func (r *reader) after(ctx context.Context, updated, key any, limit int) ([]row, error) {
	if updated == nil {
		return r.query(ctx, fmt.Sprintf("%s IS NOT NULL AND %s IS NOT NULL", r.src.updated, r.src.key), limit)
	}
	where := fmt.Sprintf("(%s, %s) > ($1, $2)", r.src.updated, r.src.key)
	return r.query(ctx, where, limit, updated, key)
}

// window reads up to limit rows from since (inclusive, or exclusive when
// exclusive is set) up to and including the pair (updated, key).
func (r *reader) window(ctx context.Context, since any, exclusive bool, updated, key any, limit int) ([]row, error) {
	op := ">="
	if exclusive {
		op = ">"
	}
	where := fmt.Sprintf("%s %s $1 AND (%s, %s) <= ($2, $3)", r.src.updated, op, r.src.updated, r.src.key)
	return r.query(ctx, where, limit, since, updated, key)
}

func (r *reader) query(ctx context.Context, where string, limit int, args ...any) ([]row, error) {
	stmt := fmt.Sprintf("SELECT *, %s AS %s, %s AS %s FROM %s", r.d.cursorExpr(r.src.updated), aliasUpdated, r.d.cursorExpr(r.src.key), aliasKey, r.src.from)
	if where != "" {
		stmt += " WHERE " + where
	}
	stmt += fmt.Sprintf(" ORDER BY %s, %s LIMIT %d", r.src.updated, r.src.key, limit)
	rows, err := r.db.QueryContext(ctx, stmt, args...)
	if err != nil {
		return nil, fmt.Errorf("read rows: %w", err)
	}
	defer func() { _ = rows.Close() }()
	cols, err := rows.Columns()
	if err != nil {
		return nil, fmt.Errorf("read rows: %w", err)
	}
	var out []row
	for rows.Next() {
		vals, err := operator.ScanSQLRow(rows, len(cols))
		if err != nil {
			return nil, fmt.Errorf("read rows: %w", err)
		}
		rw := row{payload: make(map[string]any, len(cols)-2)}
		for i, c := range cols {
			switch {
			case c == aliasUpdated && i >= len(cols)-2:
				rw.updated = vals[i]
			case c == aliasKey && i >= len(cols)-2:
				rw.key = vals[i]
			default:
				rw.payload[c] = vals[i]
			}
		}
		out = append(out, rw)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read rows: %w", err)
	}
	return out, nil
}
