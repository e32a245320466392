package statevalue

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/weirflow/weir/internal/core"
)

// NeverExpireText is the retention text of a key that never expires.
const NeverExpireText = "never"

// Retention says when a task-state key expires (docs/requirements.md#ts-3). The zero value
// is the default: [state_store] default_retention_days after the write.
type Retention struct {
	d     time.Duration
	never bool
}

// NeverExpire is the retention of a key that cleanup never deletes: it is
// stored with no expires_at and a never-expire flag.
var NeverExpire = Retention{never: true}

// RetainFor returns the retention "expire d after the write"; d must be
// positive.
func RetainFor(d time.Duration) (Retention, error) {
	if d <= 0 {
		return Retention{}, fmt.Errorf("retention must be a positive duration, got %s: %w", d, core.ErrInvalid)
	}
	return Retention{d: d}, nil
}

// IsDefault reports whether r is the default retention.
func (r Retention) IsDefault() bool { return !r.never && r.d == 0 }

// String is the text ParseRetention reads back: "" (default), "never" or a
// Go duration.
func (r Retention) String() string {
	switch {
	case r.never:
		return NeverExpireText
	case r.d == 0:
		return ""
	}
	return r.d.String()
}

// ParseRetention reads a retention: "" (the default), "never", or a
// positive duration with a unit: a Go duration ("90m", "6h", "1h30m") or a
// number of days ("7d"). A bare number is rejected because its unit would
// be a guess. Errors wrap core.ErrInvalid.
func ParseRetention(s string) (Retention, error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return Retention{}, nil
	case strings.EqualFold(s, NeverExpireText):
		return NeverExpire, nil
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.Atoi(days); err == nil {
			return RetainFor(time.Duration(n) * 24 * time.Hour)
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return Retention{}, fmt.Errorf("retention %q is not a duration: use a unit (\"6h\", \"90m\", \"7d\") or %q: %w",
			s, NeverExpireText, core.ErrInvalid)
	}
	return RetainFor(d)
}

// ParseRetentionJSON reads the retention member of a request body: absent
// or null (the default), or a JSON string for ParseRetention. A number (7)
// is rejected with a message saying why.
func ParseRetentionJSON(raw json.RawMessage) (Retention, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return Retention{}, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return Retention{}, fmt.Errorf("retention must be a string such as \"6h\", \"7d\" or %q, got %s: %w",
			NeverExpireText, raw, core.ErrInvalid)
	}
	return ParseRetention(s)
}

// Expiry computes a write's expires_at and never-expire flag at now: the
// retention's duration, or defaultDays days (0 = no expiry), or never.
func (r Retention) Expiry(now time.Time, defaultDays int) (*time.Time, bool) {
	switch {
	case r.never:
		return nil, true
	case r.d > 0:
		t := now.Add(r.d)
		return &t, false
	case defaultDays > 0:
		t := now.AddDate(0, 0, defaultDays)
		return &t, false
	}
	return nil, false
}
