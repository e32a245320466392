package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/weirflow/weir/internal/store"
)

// orderSpec maps one list's documented order fields (store.Order) to SQL.
// Every order it writes ends with the list's unique key, so that rows with
// equal values keep one order from page to page.
type orderSpec struct {
	order    store.Order
	cols     map[string]string // field → column expression
	nullable []string          // fields whose column may be NULL
	key      []string          // unique key columns, appended after the field
	def      string            // ORDER BY text of the default order; "" = none
}

// clause checks the page against the list and returns its ORDER BY clause
// (" ORDER BY ..." or ""). A field sorts in the asked direction, then the
// key in the same direction; NULL sorts as the greatest value on both
// engines (SQLite would otherwise put it first, PostgreSQL last).
func (o *orderSpec) clause(p store.Page) (string, error) {
	if err := p.Check(o.order); err != nil {
		return "", err
	}
	field, desc, _ := o.order.Parse(p.OrderBy) // checked above
	if field == "" {
		if o.def == "" {
			return "", nil
		}
		return " ORDER BY " + o.def, nil
	}
	col, ok := o.cols[field]
	if !ok {
		return "", fmt.Errorf("order_by %q: %s documents the field but the store has no column for it", p.OrderBy, o.order.List)
	}
	dir, nulls := " ASC", " NULLS LAST"
	if desc {
		dir, nulls = " DESC", " NULLS FIRST"
	}
	parts := []string{col + dir}
	if slices.Contains(o.nullable, field) {
		parts[0] += nulls
	}
	for _, k := range o.key {
		if k != col {
			parts = append(parts, k+dir)
		}
	}
	return " ORDER BY " + strings.Join(parts, ", "), nil
}

// listPage runs one page of a list. query has three %s: the WHERE clause,
// the ORDER BY clause and the LIMIT/OFFSET clause, filled from b, o and p.
func listPage[T any](ctx context.Context, s *Store, what, query string, b *builder, o *orderSpec, p store.Page,
	scan func(scanner) (*T, error)) ([]T, error) {
	order, err := o.clause(p)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	rows, err := s.reader().QueryContext(ctx, fmt.Sprintf(query, b.clause(), order, b.page(p.Limit, p.Offset)), b.args...)
	if err != nil {
		return nil, s.wrap(err, "%s", what)
	}
	out, err := collect(rows, func(r *sql.Rows) (T, error) {
		v, err := scan(r)
		if err != nil {
			var zero T
			return zero, err
		}
		return *v, nil
	})
	return out, s.wrap(err, "%s", what)
}

// count runs a list's COUNT(*) query (one %s: the WHERE clause from b).
func (s *Store) count(ctx context.Context, what, query string, b *builder) (int, error) {
	var n int
	err := s.reader().QueryRowContext(ctx, fmt.Sprintf(query, b.clause()), b.args...).Scan(&n)
	return n, s.wrap(err, "%s", what)
}

// cursor adds a keyset position on col (the list's id column, documented
// as idField) to b, after checking that the page orders by that id.
func cursor(b *builder, col, idField string, c store.Cursor, p store.Page) error {
	if err := c.Check(p, idField); err != nil {
		return err
	}
	if c.AfterID > 0 {
		b.where(col+" > ?", c.AfterID)
	}
	if c.BeforeID > 0 {
		b.where(col+" < ?", c.BeforeID)
	}
	return nil
}
