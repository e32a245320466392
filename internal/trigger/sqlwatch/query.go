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
			if len(parts) > 2 || !identifier().MatchString(p) {
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

// row is one row read: its cursor pair (JSON-ready values) and the row as
// an event payload.
type row struct {
	updated, key any
	payload      map[string]any
	past         []bool // by index of the pairs after was given
}

// reader runs the watcher's statements on one database.
type reader struct {
	db  *sql.DB
	d   dialect
	src source
}

// after reads up to limit rows past any of the pairs in from (a nil
// pair: from the first row), in cursor order, in one statement; each row
// tells which of the pairs it is past (row.past, by index). Rows whose
// updated or key is NULL are never read.
func (r *reader) after(ctx context.Context, from [][]any, limit int) ([]row, error) {
	var (
		conds, flags []string
		args         []any
		fromStart    bool
	)
	for _, p := range from {
		if p == nil {
			fromStart = true
			flags = append(flags, "1")
			continue
		}
		cond := fmt.Sprintf("(%s, %s) > ($%d, $%d)", r.src.updated, r.src.key, len(args)+1, len(args)+2)
		args = append(args, p[0], p[1])
		conds = append(conds, cond)
		flags = append(flags, "CASE WHEN "+cond+" THEN 1 ELSE 0 END")
	}
	where := fmt.Sprintf("%s IS NOT NULL AND %s IS NOT NULL", r.src.updated, r.src.key)
	if !fromStart {
		where = "(" + strings.Join(conds, " OR ") + ")"
	}
	return r.query(ctx, where, flags, limit, args...)
}

// window reads up to limit rows from since (inclusive, or exclusive when
// exclusive is set) up to and including the pair (updated, key).
func (r *reader) window(ctx context.Context, since any, exclusive bool, updated, key any, limit int) ([]row, error) {
	op := ">="
	if exclusive {
		op = ">"
	}
	where := fmt.Sprintf("%s %s $1 AND (%s, %s) <= ($2, $3)", r.src.updated, op, r.src.updated, r.src.key)
	return r.query(ctx, where, nil, limit, since, updated, key)
}

// query runs one statement: the source's rows matching where, each with
// its cursor pair and the flag expressions (selected after them), in
// cursor order, at most limit.
func (r *reader) query(ctx context.Context, where string, flags []string, limit int, args ...any) ([]row, error) {
	sel := []string{"*", r.d.cursorExpr(r.src.updated), r.d.cursorExpr(r.src.key)}
	sel = append(sel, flags...)
	//nolint:gosec // identifiers are validated and quoted when the kwargs are decoded; values are bound
	stmt := fmt.Sprintf("SELECT %s FROM %s WHERE %s ORDER BY %s, %s LIMIT %d", strings.Join(sel, ", "), r.src.from, where, r.src.updated, r.src.key, limit)
	rows, err := r.db.QueryContext(ctx, stmt, args...)
	if err != nil {
		return nil, fmt.Errorf("read rows: %w", err)
	}
	defer func() { _ = rows.Close() }()
	cols, err := rows.Columns()
	if err != nil {
		return nil, fmt.Errorf("read rows: %w", err)
	}
	own := len(cols) - 2 - len(flags) // the source's columns come first
	var out []row
	for rows.Next() {
		vals, err := operator.ScanSQLRow(rows, len(cols))
		if err != nil {
			return nil, fmt.Errorf("read rows: %w", err)
		}
		rw := row{updated: vals[own], key: vals[own+1], payload: make(map[string]any, own), past: make([]bool, len(flags))}
		for i, c := range cols[:own] {
			rw.payload[c] = vals[i]
		}
		for i := range flags {
			rw.past[i] = fmt.Sprint(vals[own+2+i]) == "1"
		}
		out = append(out, rw)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read rows: %w", err)
	}
	return out, nil
}
