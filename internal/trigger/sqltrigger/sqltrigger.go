// Package sqltrigger holds the sql trigger: it runs a query on a
// PostgreSQL or SQLite connection until its first cell is truthy
// (Airflow's SqlSensor). Connection URIs and drivers are the sql
// operator's; the program links the drivers (internal/cli).
package sqltrigger

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/weirflow/weir/internal/operator"
	"github.com/weirflow/weir/internal/trigger"
)

// Type is the sql trigger. kwargs: {"conn_id": "warehouse", "sql":
// "SELECT count(*) FROM ready", "poke_interval": "1m"}.
var Type = trigger.Type{
	Name:    "sql",
	Summary: "runs a query on a PostgreSQL or SQLite connection until its first cell is truthy",
	New:     newTrigger,
}

// sqlTrigger is a built sql trigger.
type sqlTrigger struct {
	connID, query string
	interval      time.Duration
}

func newTrigger(raw json.RawMessage) (trigger.Trigger, error) {
	var k struct {
		ConnID       *string `json:"conn_id"`
		SQL          *string `json:"sql"`
		PokeInterval *string `json:"poke_interval"`
	}
	if err := trigger.DecodeKwargs(raw, &k); err != nil {
		return nil, err
	}
	switch {
	case k.ConnID == nil || *k.ConnID == "":
		return nil, trigger.Invalid("conn_id", "is required (a postgres:// or sqlite:// connection)")
	case k.SQL == nil || strings.TrimSpace(*k.SQL) == "":
		return nil, trigger.Invalid("sql", "is required (one statement whose first cell decides, such as SELECT count(*) FROM t)")
	}
	interval, err := trigger.Interval("poke_interval", k.PokeInterval, trigger.DefaultPollInterval)
	if err != nil {
		return nil, err
	}
	return &sqlTrigger{connID: *k.ConnID, query: *k.SQL, interval: interval}, nil
}

func (s *sqlTrigger) Run(ctx context.Context, rt *trigger.Runtime) error {
	var db *sql.DB // opened on the first poll, kept for the next ones
	defer func() {
		if db != nil {
			_ = db.Close()
		}
	}()
	return trigger.Poll(ctx, rt, s.interval, func(ctx context.Context) (any, bool, error) {
		if db == nil {
			var err error
			if db, err = s.open(ctx, rt); err != nil {
				return nil, false, err
			}
		}
		return s.check(ctx, db)
	})
}

// open resolves the connection and opens its database (no connection is
// made until the first query).
func (s *sqlTrigger) open(ctx context.Context, rt *trigger.Runtime) (*sql.DB, error) {
	u, err := rt.Connection(ctx, s.connID)
	if err != nil {
		return nil, err
	}
	driver, dsn, err := operator.SQLDSN(u)
	if err != nil {
		return nil, trigger.Permanent(fmt.Errorf("connection %q: %w", s.connID, err))
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		return nil, trigger.Permanent(fmt.Errorf("open connection %q: %w", s.connID, err))
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

// check runs the query once: a truthy first cell gives its first row,
// column name to value, as the event.
func (s *sqlTrigger) check(ctx context.Context, db *sql.DB) (any, bool, error) {
	rows, err := db.QueryContext(ctx, s.query)
	if err != nil {
		return nil, false, fmt.Errorf("sql on connection %q: %w", s.connID, err)
	}
	defer func() { _ = rows.Close() }()
	cols, err := rows.Columns()
	if err != nil {
		return nil, false, fmt.Errorf("sql on connection %q: %w", s.connID, err)
	}
	if len(cols) == 0 {
		return nil, false, trigger.Permanent(fmt.Errorf("sql on connection %q returns no columns: it must be a query such as SELECT", s.connID))
	}
	if !rows.Next() {
		return nil, false, rows.Err()
	}
	vals, err := operator.ScanSQLRow(rows, len(cols))
	if err != nil {
		return nil, false, fmt.Errorf("sql on connection %q: read the first row: %w", s.connID, err)
	}
	if !Truthy(vals[0]) {
		return nil, false, nil
	}
	row := make(map[string]any, len(cols))
	for i, c := range cols {
		row[c] = vals[i]
	}
	return row, true, nil
}

// Truthy tells whether a cell fires the trigger: anything but NULL, false,
// a zero number (also as text, which is how PostgreSQL's NUMERIC arrives)
// and the empty string.
func Truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case int64:
		return x != 0
	case float64:
		return x != 0
	case string:
		if f, err := strconv.ParseFloat(strings.TrimSpace(x), 64); err == nil {
			return f != 0
		}
		return x != ""
	}
	return true
}
