// Package emission holds the rules of asset events emitted by running code
// (docs/requirements.md#e, docs/emission.md): what a request may carry (a partition date
// needs a partition key, extra is a small JSON object whose secrets are
// masked, an idempotency key is short printable text) and which assets a
// task may emit for (its concrete outlets, or any active asset through an
// alias it declares as an outlet). The functions are pure; package service
// applies them in its transactions, and the Execution API, the REST API, the
// SDK and the CLI only translate to and from a Request.
package emission

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/secrets"
)

// Limits of one emission.
const (
	// DefaultMaxExtraBytes bounds an event's extra (compact JSON): events
	// carry references to data, not the data.
	DefaultMaxExtraBytes = 16 << 10
	// MaxKeyLen bounds a partition key and an idempotency key, in bytes.
	MaxKeyLen = 256
)

// Request is one emission as its caller asks for it.
type Request struct {
	// Asset names the asset by exactly one of Name or URI.
	Asset core.AssetRef
	// Alias, when set, is the alias outlet the asset is emitted through:
	// the asset may then be any active asset, and the alias resolves to it
	// from this event on.
	Alias        string
	PartitionKey *string
	// PartitionDate is an RFC 3339 time with a zone offset ("" = none);
	// it needs PartitionKey.
	PartitionDate string
	// Extra is a JSON object (empty = {}).
	Extra json.RawMessage
	// IdempotencyKey, when set, names the one event this emission creates:
	// emitting again with it returns that event's receipt. Set, it may not
	// be empty: an empty key would silently create an event per repeat.
	IdempotencyKey *string
}

// Checked is a request that passed Check, in the form the store records.
type Checked struct {
	Request
	Date  *time.Time      // the parsed partition date
	Extra json.RawMessage // compact, secrets masked
}

// Key returns the request's idempotency key ("" = none).
func (r *Request) Key() string {
	if r.IdempotencyKey == nil {
		return ""
	}
	return *r.IdempotencyKey
}

// Check validates a request's fields against maxExtra (bytes of compact
// extra; ≤ 0 = DefaultMaxExtraBytes) and returns it ready to record, with
// the values of secret-named keys in extra (password, token, api_key, ...)
// and URL passwords replaced by "***". Errors wrap core.ErrInvalid, or
// core.ErrTooLarge for an oversized extra, and name the field at fault.
func Check(r Request, maxExtra int) (*Checked, error) {
	if maxExtra <= 0 {
		maxExtra = DefaultMaxExtraBytes
	}
	switch {
	case r.Asset.Alias != "" || (r.Asset.Name == "") == (r.Asset.URI == ""):
		return nil, fmt.Errorf(`"asset" must name a concrete asset by exactly one of name or uri, got %q: %w`,
			r.Asset.String(), core.ErrInvalid)
	case r.PartitionDate != "" && r.PartitionKey == nil:
		return nil, fmt.Errorf(`"partition_date" %q needs a "partition_key": a date describes a partition: %w`,
			r.PartitionDate, core.ErrInvalid)
	}
	c := &Checked{Request: r}
	if r.PartitionKey != nil {
		if err := checkKey("partition_key", *r.PartitionKey); err != nil {
			return nil, err
		}
	}
	if r.IdempotencyKey != nil {
		if err := checkKey("idempotency_key", *r.IdempotencyKey); err != nil {
			return nil, err
		}
	}
	if r.PartitionDate != "" {
		d, err := ParseDate(r.PartitionDate)
		if err != nil {
			return nil, err
		}
		c.Date = &d
	}
	extra, err := CheckExtra(r.Extra, maxExtra)
	if err != nil {
		return nil, err
	}
	c.Extra = extra
	return c, nil
}

// ParseDate parses a partition date: RFC 3339 with a zone offset
// ("2026-03-01T00:00:00+01:00" or "...Z"). A date without a zone is refused
// (core.ErrInvalid): a partition date must be timezone-aware.
func ParseDate(s string) (time.Time, error) {
	d, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf(`"partition_date" %q must be an RFC 3339 time with a zone offset, such as 2026-03-01T00:00:00Z or 2026-03-01T00:00:00+01:00: %w`,
			s, core.ErrInvalid)
	}
	return d, nil
}

// CheckExtra checks that raw is a JSON object (empty = {}) of at most limit
// bytes when compacted, and returns it compact with its secrets masked.
func CheckExtra(raw json.RawMessage, limit int) (json.RawMessage, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return json.RawMessage("{}"), nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		if err != nil && !errors.As(err, new(*json.UnmarshalTypeError)) {
			hint := ""
			if bytes.Contains(raw, []byte("NaN")) || bytes.Contains(raw, []byte("Infinity")) {
				hint = "; NaN and Infinity are not JSON numbers"
			}
			return nil, fmt.Errorf(`"extra" is not JSON (%w%s): %w`, err, hint, core.ErrInvalid)
		}
		return nil, fmt.Errorf(`"extra" must be a JSON object such as {"rows": 10}, got %.40s: %w`, raw, core.ErrInvalid)
	}
	if err := json.Unmarshal(raw, new(map[string]any)); err != nil {
		return nil, fmt.Errorf(`"extra" holds a value JSON decoders cannot read (%w): %w`, err, core.ErrInvalid)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, fmt.Errorf(`"extra": %w: %w`, err, core.ErrInvalid)
	}
	if buf.Len() > limit {
		return nil, fmt.Errorf(`"extra" is %d bytes, more than the %d allowed: put a reference to the data (a path, an id) in the event, not the data: %w`,
			buf.Len(), limit, core.ErrTooLarge)
	}
	return secrets.MaskJSON(buf.Bytes()), nil
}

// CheckPartitionKey checks a partition key (an event's or a run's): 1 to
// MaxKeyLen bytes of printable text.
func CheckPartitionKey(k string) error { return checkKey("partition_key", k) }

// checkKey checks a partition or idempotency key: 1 to MaxKeyLen bytes of
// printable text.
func checkKey(field, k string) error {
	switch {
	case k == "":
		return fmt.Errorf("%q must not be empty (leave it out instead): %w", field, core.ErrInvalid)
	case len(k) > MaxKeyLen:
		return fmt.Errorf("%q is %d bytes, more than the %d allowed: %w", field, len(k), MaxKeyLen, core.ErrInvalid)
	case strings.IndexFunc(k, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0:
		return fmt.Errorf("%q %s holds a control character: %w", field, strconv.Quote(k), core.ErrInvalid)
	}
	return nil
}

// Target returns the asset a task of dag may emit r for: one of its
// concrete outlets, or — through r.Alias — the asset r names, which the
// caller must still find active (nil then, with the alias checked). Any
// other asset or alias is refused (core.ErrForbidden) with the outlets the
// task declares.
func Target(dag *core.DAG, task *core.Task, r Request) (*core.Asset, error) {
	if r.Alias != "" {
		for _, o := range task.Outlets {
			if o.Alias == r.Alias {
				return nil, nil
			}
		}
		return nil, fmt.Errorf("task %s may not emit through alias %q: it is not one of the task's outlets (%s): %w",
			task.TaskID, r.Alias, Declared(dag, task), core.ErrForbidden)
	}
	want := dag.Asset(r.Asset)
	if want != nil {
		for _, a := range dag.ConcreteAssets(task.Outlets) {
			if a.Name == want.Name {
				return want, nil
			}
		}
	}
	return nil, fmt.Errorf("task %s may not emit events for asset %s: it is not one of the task's outlets (%s): %w",
		task.TaskID, r.Asset.String(), Declared(dag, task), core.ErrForbidden)
}

// Declared describes a task's outlets for an error: its assets by name and
// its aliases ("outlets: assets "a", "b"; aliases "x"" or "no outlets").
func Declared(dag *core.DAG, task *core.Task) string {
	var assets, aliases []string
	for _, a := range dag.ConcreteAssets(task.Outlets) {
		assets = append(assets, strconv.Quote(a.Name))
	}
	for _, o := range task.Outlets {
		if o.Alias != "" {
			aliases = append(aliases, strconv.Quote(o.Alias))
		}
	}
	var parts []string
	if len(assets) > 0 {
		parts = append(parts, "assets "+strings.Join(assets, ", "))
	}
	if len(aliases) > 0 {
		parts = append(parts, "aliases "+strings.Join(aliases, ", "))
	}
	if len(parts) == 0 {
		return "it declares no outlets"
	}
	return "its outlets: " + strings.Join(parts, "; ")
}
