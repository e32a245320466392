package operator

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"time"

	"github.com/weirflow/weir/internal/core"
)

// DefaultMaxSQLRows is how many rows of a SELECT become the return value.
const DefaultMaxSQLRows = 1000

// runSQL runs sql (a string, or a list of statements run in order) on the
// conn_id's database (postgres://... or sqlite:///path). The last statement's
// rows, when it returns any columns, become the return value as a list of
// objects, capped at max_rows (default 1000). The database/sql drivers
// ("pgx", "sqlite") are linked by the program that wires the worker
// (internal/cli), not by this package, so that the worker's import graph
// holds no database driver.
func (r *Runner) runSQL(ctx context.Context, req *Request) (*Result, error) {
	connID, err := stringArg(req.Args, "conn_id", true)
	if err != nil {
		return nil, err
	}
	stmts, err := sqlStatements(req.Args["sql"])
	if err != nil {
		return nil, err
	}
	limit, err := intArg(req.Args, "max_rows", r.MaxSQLRows)
	if err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = DefaultMaxSQLRows
	}
	u, err := r.connection(ctx, req, connID)
	if err != nil {
		return nil, err
	}
	driver, dsn, err := SQLDSN(u)
	if err != nil {
		return nil, fmt.Errorf("connection %q: %w", connID, err)
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		return nil, fmt.Errorf("open connection %q: %w", connID, err)
	}
	defer func() { _ = db.Close() }()
	req.logf("running %d sql statement(s) on %s", len(stmts), u.Redacted())
	for i, s := range stmts[:len(stmts)-1] {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return nil, fmt.Errorf("sql statement %d: %w", i+1, err)
		}
	}
	rows, err := db.QueryContext(ctx, stmts[len(stmts)-1])
	if err != nil {
		return nil, fmt.Errorf("sql statement %d: %w", len(stmts), err)
	}
	defer func() { _ = rows.Close() }()
	out, truncated, err := collectRows(rows, limit)
	if err != nil {
		return nil, fmt.Errorf("sql statement %d: read rows: %w", len(stmts), err)
	}
	if out == nil {
		req.logf("sql done")
		return &Result{}, nil
	}
	if truncated {
		req.logf("WARNING: result cut to max_rows=%d rows", limit)
	}
	req.logf("sql returned %d row(s)", len(out))
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("encode sql rows as JSON: %w", err)
	}
	return &Result{ReturnValue: b}, nil
}

func sqlStatements(v any) ([]string, error) {
	switch x := v.(type) {
	case string:
		if x != "" {
			return []string{x}, nil
		}
	case []any:
		var out []string
		for i, s := range x {
			str, ok := s.(string)
			if !ok || str == "" {
				return nil, fmt.Errorf("argument \"sql\"[%d] must be a non-empty string: %w", i, core.ErrInvalid)
			}
			out = append(out, str)
		}
		if len(out) > 0 {
			return out, nil
		}
	}
	return nil, fmt.Errorf("argument \"sql\" must be a statement or a list of statements: %w", core.ErrInvalid)
}

// SQLDSN maps a connection URI (postgres://..., sqlite:///path) to a
// database/sql driver name and DSN. Errors wrap core.ErrInvalid.
func SQLDSN(u *url.URL) (string, string, error) {
	switch u.Scheme {
	case "postgres", "postgresql":
		return "pgx", u.String(), nil
	case "sqlite", "sqlite3":
		p := filepath.Clean(u.Host + u.Path)
		if u.Host == "" && u.Path == "" {
			return "", "", fmt.Errorf("sqlite URI needs a path (sqlite:///path/to/file.db): %w", core.ErrInvalid)
		}
		q := url.Values{}
		q.Add("_pragma", "busy_timeout(5000)")
		return "sqlite", "file:" + p + "?" + q.Encode(), nil
	}
	return "", "", fmt.Errorf("unsupported database scheme %q (want postgres or sqlite): %w", u.Scheme, core.ErrInvalid)
}

// collectRows reads up to limit rows as objects; nil when the statement
// returns no columns.
func collectRows(rows *sql.Rows, limit int) ([]map[string]any, bool, error) {
	cols, err := rows.Columns()
	if err != nil || len(cols) == 0 {
		return nil, false, err
	}
	out := []map[string]any{}
	for rows.Next() {
		if len(out) == limit {
			return out, true, rows.Err()
		}
		vals, err := ScanSQLRow(rows, len(cols))
		if err != nil {
			return nil, false, err
		}
		row := make(map[string]any, len(cols))
		for i, c := range cols {
			row[c] = vals[i]
		}
		out = append(out, row)
	}
	return out, false, rows.Err()
}

// ScanSQLRow scans the current row of n columns into JSON-friendly values
// (bytes as text, times as RFC 3339 UTC strings).
func ScanSQLRow(rows *sql.Rows, n int) ([]any, error) {
	vals := make([]any, n)
	ptrs := make([]any, n)
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		return nil, err
	}
	for i, v := range vals {
		vals[i] = jsonValue(v)
	}
	return vals, nil
}

// jsonValue makes a driver value JSON-friendly.
func jsonValue(v any) any {
	switch x := v.(type) {
	case []byte:
		return string(x)
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano)
	}
	return v
}
