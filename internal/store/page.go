package store

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/weirflow/weir/internal/core"
)

// Page selects one window of a list, in the database: at most Limit rows
// after skipping Offset, in the order OrderBy names. Every list method takes
// its filters and a Page; a sibling Count method with the same filters gives
// the total (the REST API's total_entries).
type Page struct {
	Limit  int // 0 = no limit (internal callers only; the REST API always sets one)
	Offset int
	// OrderBy is one of the fields the list documents, "-" first for
	// descending; "" = the list's default order. Every order ends with a
	// unique key, so pages are stable. An unknown field wraps core.ErrInvalid.
	OrderBy string
}

// List reads one page with list and the size of the whole list with count,
// both given the same parameters p: what every paged surface (REST API,
// CLI) shows as a page and its total_entries. When p's Page (every list's
// parameters embed one) shows the page is the last one — no limit, or a
// non-empty page shorter than the limit — and no keyset cursor narrows it
// (the total ignores cursors), the total is known without the count query.
// The page is never nil.
func List[P, T any](ctx context.Context, p *P,
	list func(context.Context, *P) ([]T, error), count func(context.Context, *P) (int, error)) ([]T, int, error) {
	items, err := list(ctx, p)
	if err != nil {
		return nil, 0, err
	}
	if items == nil {
		items = []T{}
	}
	if total, ok := lastPageTotal(p, len(items)); ok {
		return items, total, nil
	}
	total, err := count(ctx, p)
	if err != nil {
		return nil, 0, err
	}
	return items, total, nil
}

// lastPageTotal is the list's size when a page of n entries read with p is
// its last one; ok is false when only a count can tell.
func lastPageTotal(p any, n int) (total int, ok bool) {
	if c, isKeyset := p.(interface{ Set() bool }); isKeyset && c.Set() {
		return 0, false // a cursor's page says nothing of the whole list's size
	}
	pg, paged := p.(interface{ Paging() Page })
	if !paged {
		return 0, false
	}
	page := pg.Paging()
	if page.Limit <= 0 || n > 0 && n < page.Limit {
		return page.Offset + n, true
	}
	return 0, false
}

// Paging returns the page itself; list parameters that embed a Page have
// it too, which is how List reads their page.
func (p Page) Paging() Page { return p }

// Check returns an error wrapping core.ErrInvalid when the page asks for a
// negative limit or offset, or orders by a field o does not list.
func (p Page) Check(o Order) error {
	if p.Limit < 0 || p.Offset < 0 {
		return fmt.Errorf("limit %d, offset %d: neither may be negative: %w", p.Limit, p.Offset, core.ErrInvalid)
	}
	_, _, err := o.Parse(p.OrderBy)
	return err
}

// Order documents how one list may be ordered: the fields Page.OrderBy
// accepts (named as in the list's JSON) and what an empty OrderBy means.
// A null value sorts after every other value, as if it were the greatest
// (last ascending, first descending), on every engine.
type Order struct {
	List    string   // the list, for messages: "DAG runs"
	Fields  []string // the accepted fields
	Default string   // the default order, in words, for documentation
}

// Parse splits orderBy into its field and direction ("" gives "", false).
// A field o does not list is an error wrapping core.ErrInvalid that names
// the allowed fields.
func (o Order) Parse(orderBy string) (field string, desc bool, err error) {
	field, desc = strings.CutPrefix(orderBy, "-")
	if orderBy == "" || slices.Contains(o.Fields, field) {
		return field, desc, nil
	}
	return "", false, fmt.Errorf("order_by %q: %s cannot be ordered by %q; allowed: %s (prefix \"-\" for descending): %w",
		orderBy, o.List, field, strings.Join(o.Fields, ", "), core.ErrInvalid)
}

// Doc describes the accepted fields and the default for documentation.
func (o Order) Doc() string {
	return fmt.Sprintf("order_by: one of %s; \"-\" first for descending (e.g. -%s). Default: %s.",
		strings.Join(o.Fields, ", "), o.Fields[0], o.Default)
}

// The orders of Weir's lists. The field names are the JSON names of the
// listed objects in the REST API.
var (
	DagOrder = Order{List: "DAGs", Default: "dag_id",
		Fields: []string{"dag_id", "is_paused", "fileloc", "timetable_summary", "last_parsed_time", "next_dagrun_run_after"}}
	DagRunOrder = Order{List: "DAG runs", Default: "-id (newest first)",
		Fields: []string{"id", "dag_id", "dag_run_id", "run_type", "state", "logical_date", "queued_at",
			"start_date", "end_date", "data_interval_start", "data_interval_end"}}
	TaskInstanceOrder = Order{List: "task instances", Default: "by run (oldest run first), then task_id and map_index",
		Fields: []string{"dag_id", "dag_run_id", "task_id", "map_index", "try_number", "state", "pool", "queue",
			"priority_weight", "operator", "queued_dttm", "start_date", "end_date"}}
	XComOrder = Order{List: "XCom entries", Default: "task_id, then map_index and key",
		Fields: []string{"task_id", "map_index", "key", "timestamp"}}
	ImportErrorOrder = Order{List: "import errors", Default: "filename",
		Fields: []string{"import_error_id", "filename", "timestamp"}}
	DagWarningOrder = Order{List: "DAG warnings", Default: "dag_id, then warning_type",
		Fields: []string{"dag_id", "warning_type", "timestamp"}}
	PoolOrder       = Order{List: "pools", Default: "name", Fields: []string{"name", "slots"}}
	ConnectionOrder = Order{List: "connections", Default: "connection_id", Fields: []string{"connection_id"}}
	VariableOrder   = Order{List: "variables", Default: "key", Fields: []string{"key"}}
	CallbackOrder   = Order{List: "callbacks", Default: "id", Fields: []string{"id", "created_at", "state"}}
	UserOrder       = Order{List: "users", Default: "username", Fields: []string{"username", "role", "created_at"}}
	AssetOrder      = Order{List: "assets", Default: "name",
		Fields: []string{"name", "id", "uri", "group", "created_at", "updated_at"}}
	AssetAliasOrder = Order{List: "asset aliases", Default: "name", Fields: []string{"name", "id", "created_at"}}
	AssetEventOrder = Order{List: "asset events", Default: "id (oldest first)",
		Fields: []string{"id", "timestamp", "asset_id", "source_dag_id", "callback_depth"}}
	TriggerOrder  = Order{List: "triggers", Default: "id", Fields: []string{"id", "created_date", "triggerer_id"}}
	AuditLogOrder = Order{List: "event logs", Default: "-event_log_id (newest first)",
		Fields: []string{"event_log_id", "when", "event", "owner"}}
)

// Cursor is a keyset position in a list ordered by id: only entries whose
// id is greater than AfterID (when set) and less than BeforeID (when set).
// To page forward, pass the last id of a page as AfterID (ascending order)
// or BeforeID (descending order): unlike Offset, the database then starts
// at the position through the id index instead of counting the rows
// before it. A cursor does not change the list's Count, which stays the
// size of the whole filtered list.
type Cursor struct {
	AfterID  int64 // 0 = no lower bound
	BeforeID int64 // 0 = no upper bound
}

// Set reports whether the cursor bounds the list.
func (c Cursor) Set() bool { return c.AfterID > 0 || c.BeforeID > 0 }

// Check returns an error wrapping core.ErrInvalid when the cursor is set but
// the page is ordered by something other than idField (or its default,
// which orders by id): a cursor is a position in the id order only.
func (c Cursor) Check(p Page, idField string) error {
	if c.AfterID < 0 || c.BeforeID < 0 {
		return fmt.Errorf("after_id %d, before_id %d: ids are positive: %w", c.AfterID, c.BeforeID, core.ErrInvalid)
	}
	if !c.Set() {
		return nil
	}
	if f, _ := strings.CutPrefix(p.OrderBy, "-"); f != "" && f != idField {
		return fmt.Errorf("after_id and before_id are positions in the %s order: use them with order_by %s or -%s, not %q: %w",
			idField, idField, idField, p.OrderBy, core.ErrInvalid)
	}
	return nil
}
