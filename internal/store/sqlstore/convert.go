package sqlstore

import (
	"database/sql"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/weirflow/weir/internal/core"
)

var errNotFound = core.ErrNotFound

// micros converts a time to stored microseconds since the epoch.
func micros(t time.Time) int64 { return t.UnixMicro() }

// nullMicros converts an optional time to a bind value (nil for NULL).
func nullMicros(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UnixMicro()
}

// fromMicros converts stored microseconds back to a UTC time.
func fromMicros(v int64) time.Time { return time.UnixMicro(v).UTC() }

// ptrMicros converts a nullable stored time back to *time.Time.
func ptrMicros(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := fromMicros(v.Int64)
	return &t
}

// nullJSON binds an optional JSON document (nil or empty for NULL).
func nullJSON(b json.RawMessage) any {
	if len(b) == 0 {
		return nil
	}
	return string(b)
}

// rawJSON converts a nullable stored JSON document back.
func rawJSON(v sql.NullString) json.RawMessage {
	if !v.Valid || v.String == "" {
		return nil
	}
	return json.RawMessage(v.String)
}

// nullID binds an optional numeric id (0 for NULL).
func nullID(id int64) any {
	if id == 0 {
		return nil
	}
	return id
}

// builder accumulates WHERE conditions and their $N arguments.
type builder struct {
	conds []string
	args  []any
}

// arg adds a bind value and returns its placeholder.
func (b *builder) arg(v any) string {
	b.args = append(b.args, v)
	return "$" + strconv.Itoa(len(b.args))
}

// where adds a condition built from a format with one placeholder per value.
func (b *builder) where(cond string, vals ...any) {
	for _, v := range vals {
		cond = strings.Replace(cond, "?", b.arg(v), 1)
	}
	b.conds = append(b.conds, cond)
}

// in adds "col IN (...)" for a non-empty list; nothing when the list is empty.
func in[T ~string](b *builder, col string, vals []T) {
	if len(vals) == 0 {
		return
	}
	b.conds = append(b.conds, col+" IN ("+list(b, vals)+")")
}

// list binds every value and returns the comma-separated placeholders.
func list[T ~string](b *builder, vals []T) string {
	ph := make([]string, len(vals))
	for i, v := range vals {
		ph[i] = b.arg(string(v))
	}
	return strings.Join(ph, ", ")
}

// ints binds every id and returns the comma-separated placeholders.
func ints(b *builder, ids []int64) string {
	ph := make([]string, len(ids))
	for i, id := range ids {
		ph[i] = b.arg(id)
	}
	return strings.Join(ph, ", ")
}

// clause returns " WHERE a AND b" or "".
func (b *builder) clause() string {
	if len(b.conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(b.conds, " AND ")
}

// page returns " LIMIT $n OFFSET $m" for a positive limit or offset.
func (b *builder) page(limit, offset int) string {
	s := ""
	if limit > 0 {
		s += " LIMIT " + b.arg(limit)
	} else if offset > 0 {
		s += " LIMIT 9223372036854775807" // SQLite needs a LIMIT before OFFSET
	}
	if offset > 0 {
		s += " OFFSET " + b.arg(offset)
	}
	return s
}

// qualified prefixes each column of a comma-separated list with table
// alias t ("a, b" → "t.a, t.b").
func qualified(t, cols string) string {
	parts := strings.Split(cols, ",")
	for i, c := range parts {
		parts[i] = t + "." + strings.TrimSpace(c)
	}
	return strings.Join(parts, ", ")
}
