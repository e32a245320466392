// Package sqlwatch holds the sql_incremental watcher: it polls a table or
// a query on a PostgreSQL or SQLite connection for the rows whose
// (updated, key) pair passed the asset's cursor, a high-water mark with a
// tie-breaker key, and records an asset event per row (docs/watchers.md).
// An optional lookback window also catches rows committed late with an
// updated value at or below the mark.
package sqlwatch

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/weirflow/weir/internal/operator"
	"github.com/weirflow/weir/internal/trigger"
)

// DefaultMaxItems bounds the rows one poll reads when max_items is not set.
const DefaultMaxItems = 1000

// Type is the sql_incremental watcher. kwargs: {"conn_id": "shop",
// "table": "orders", "updated_column": "updated_at", "key_column": "id"}
// (or "query" instead of "table"), with optional lookback,
// partition_column, route_column and route, max_items and poll_interval.
var Type = trigger.Type{
	Name:        "sql_incremental",
	Summary:     "watches a table or query on a PostgreSQL or SQLite connection for rows whose updated column passed the cursor",
	New:         newWatcher,
	Uses:        trigger.UseWatcher,
	CheckCursor: func(raw json.RawMessage) error { _, err := decodeCursor(raw); return err },
}

// watcher is a built sql_incremental trigger.
type watcher struct {
	connID      string
	src         source
	partition   string         // column giving the partition key, "" = none
	routeColumn string         // column the route patterns match, "" = no routing
	route       trigger.Routes // on the route column's text
	lookback    *lookback      // nil = a plain high-water mark
	maxItems    int
	interval    time.Duration
}

// kwargs are the sql_incremental kwargs as decoded.
type kwargs struct {
	ConnID          *string           `json:"conn_id"`
	Table           *string           `json:"table"`
	Query           *string           `json:"query"`
	UpdatedColumn   *string           `json:"updated_column"`
	KeyColumn       *string           `json:"key_column"`
	PartitionColumn *string           `json:"partition_column"`
	RouteColumn     *string           `json:"route_column"`
	Route           map[string]string `json:"route"`
	Lookback        json.RawMessage   `json:"lookback"`
	MaxItems        *int              `json:"max_items"`
	PollInterval    *string           `json:"poll_interval"`
}

// identifier is a column or table name Weir quotes itself: letters,
// digits, '_' and '$', not starting with a digit.
var identifier = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_$]*$`) })

func newWatcher(raw json.RawMessage) (trigger.Trigger, error) {
	var k kwargs
	if err := trigger.DecodeKwargs(raw, &k); err != nil {
		return nil, err
	}
	if k.ConnID == nil || *k.ConnID == "" {
		return nil, trigger.Invalid("conn_id", "is required (a postgres:// or sqlite:// connection)")
	}
	w := &watcher{connID: *k.ConnID, maxItems: DefaultMaxItems}
	var err error
	if w.src, err = newSource(k); err != nil {
		return nil, err
	}
	if w.partition, err = column("partition_column", k.PartitionColumn); err != nil {
		return nil, err
	}
	if err := w.routing(k); err != nil {
		return nil, err
	}
	if w.lookback, err = parseLookback(k.Lookback); err != nil {
		return nil, err
	}
	if k.MaxItems != nil {
		if *k.MaxItems < 1 || *k.MaxItems > 10000 {
			return nil, trigger.Invalid("max_items", "must be from 1 to 10000 rows per poll, got %d", *k.MaxItems)
		}
		w.maxItems = *k.MaxItems
	}
	if w.interval, err = trigger.Interval("poll_interval", k.PollInterval, trigger.DefaultPollInterval); err != nil {
		return nil, err
	}
	return w, nil
}

// column checks the optional column-name kwarg name.
func column(name string, v *string) (string, error) {
	if v == nil {
		return "", nil
	}
	if !identifier().MatchString(*v) {
		return "", trigger.Invalid(name, "must be a column name (letters, digits, _ and $, not starting with a digit), got %q", *v)
	}
	return *v, nil
}

// routing checks route and route_column, which go together.
func (w *watcher) routing(k kwargs) error {
	var err error
	if w.routeColumn, err = column("route_column", k.RouteColumn); err != nil {
		return err
	}
	w.route, err = trigger.ParseRoutes(k.Route, "route_column", w.routeColumn != "")
	return err
}

// Run polls until ctx ends, as an asset watcher only.
func (w *watcher) Run(ctx context.Context, rt *trigger.Runtime) error {
	if rt.Watcher == nil {
		return trigger.Permanent(trigger.ErrNotWatching)
	}
	var (
		db *sql.DB // opened on the first poll, kept for the next ones
		d  dialect
	)
	defer func() {
		if db != nil {
			_ = db.Close()
		}
	}()
	return trigger.Watch(ctx, rt, trigger.WatchOptions{Interval: w.interval}, func(ctx context.Context, watched []trigger.Watched) (trigger.Batch, error) {
		if db == nil {
			var err error
			if db, d, err = w.open(ctx, rt); err != nil {
				return trigger.Batch{}, err
			}
		}
		return w.poll(ctx, &reader{db: db, d: d, src: w.src}, watched)
	})
}

// open resolves the connection and opens its database (no connection is
// made until the first query).
func (w *watcher) open(ctx context.Context, rt *trigger.Runtime) (*sql.DB, dialect, error) {
	u, err := rt.Connection(ctx, w.connID)
	if err != nil {
		return nil, 0, err
	}
	driver, dsn, err := operator.SQLDSN(u)
	if err != nil {
		return nil, 0, trigger.Permanent(fmt.Errorf("connection %q: %w", w.connID, err))
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		return nil, 0, trigger.Permanent(fmt.Errorf("open connection %q: %w", w.connID, err))
	}
	db.SetMaxOpenConns(1)
	d := postgres
	if strings.HasPrefix(driver, "sqlite") {
		d = sqlite
	}
	return db, d, nil
}
