package statevalue_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/statevalue"
)

// docs/requirements.md#ts-3: a retention is a duration with a unit, "never", or absent; a
// bare integer or anything else is refused with a message saying why.
func TestParseRetention(t *testing.T) {
	t.Parallel()
	good := map[string]string{"": "", "never": "never", "NEVER": "never", "6h": "6h0m0s", "90m": "1h30m0s", "7d": "168h0m0s"}
	for in, want := range good {
		r, err := statevalue.ParseRetention(in)
		if err != nil || r.String() != want {
			t.Errorf("ParseRetention(%q) = %q, %v; want %q", in, r, err, want)
		}
	}
	for in, want := range map[string]string{"7": "not a duration", "soon": "not a duration", "-1h": "positive", "0s": "positive", "0d": "positive"} {
		if _, err := statevalue.ParseRetention(in); !errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseRetention(%q) = %v, want ErrInvalid with %q", in, err, want)
		}
	}
	if _, err := statevalue.ParseRetentionJSON(json.RawMessage(`7`)); !errors.Is(err, core.ErrInvalid) ||
		!strings.Contains(err.Error(), "must be a string") {
		t.Errorf("retention 7 (a JSON number) = %v", err)
	}
	if r, err := statevalue.ParseRetentionJSON(json.RawMessage(`"never"`)); err != nil || r != statevalue.NeverExpire {
		t.Errorf(`retention "never" = %v, %v`, r, err)
	}
	if r, err := statevalue.ParseRetentionJSON(nil); err != nil || !r.IsDefault() {
		t.Errorf("absent retention = %v, %v", r, err)
	}
}
