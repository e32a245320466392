package runs

import (
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
)

// TestRunIDPattern checks which run ids a trigger may choose: the default
// pattern refuses shell metacharacters (issue 13, finding 2) and every
// generated run id passes, whatever the configured pattern.
func TestRunIDPattern(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 30, 45, 123456000, time.UTC)
	strict := regexp.MustCompile(`^[a-z]+$`)
	tests := []struct {
		name    string
		runID   string
		runType core.RunType
		rules   TriggerRules
		errPart string // "" = accepted
	}{
		{name: "plain", runID: "nightly-2026.03_01~rerun:1+x"},
		{name: "command substitution", runID: "$(id>x)", errPart: `run_id "$(id>x)" does not match the allowed pattern ^[A-Za-z0-9_.~:+-]+$ ([scheduler] allowed_run_id_pattern)`},
		{name: "backticks", runID: "a`id`", errPart: "does not match the allowed pattern"},
		{name: "quote and semicolon", runID: `"; id; "`, errPart: "does not match the allowed pattern"},
		{name: "space", runID: "a b", errPart: "does not match the allowed pattern"},
		{name: "non-ASCII", runID: "café", errPart: "does not match the allowed pattern"},
		{name: "generated manual", runType: core.RunManual},
		{name: "generated scheduled", runType: core.RunScheduled},
		{name: "generated asset", runType: core.RunAssetTriggered},
		{name: "custom pattern refuses", runID: "Run1", rules: TriggerRules{RunIDPattern: strict}, errPart: "allowed pattern ^[a-z]+$"},
		{name: "custom pattern accepts", runID: "run", rules: TriggerRules{RunIDPattern: strict}},
		{name: "generated ids pass a custom pattern", rules: TriggerRules{RunIDPattern: strict}},
		{name: "a test run id passes a custom pattern", runID: RunID("test", now), rules: TriggerRules{RunIDPattern: strict}},
		{name: "custom pattern cannot allow a slash", runID: "a/b", rules: TriggerRules{RunIDPattern: regexp.MustCompile(`.*`)}, errPart: "must not contain '/'"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			nr, err := PrepareTrigger(TriggerParams{DagID: "d", RunID: tc.runID, RunType: tc.runType}, tc.rules, now)
			if tc.errPart == "" {
				if err != nil {
					t.Fatalf("run id %q refused: %v", tc.runID, err)
				}
				if tc.runID == "" && !defaultRunIDPattern().MatchString(nr.RunID) {
					t.Errorf("generated run id %q does not match the default pattern", nr.RunID)
				}
				return
			}
			if err == nil || !errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), tc.errPart) {
				t.Fatalf("run id %q: error %v, want ErrInvalid containing %q", tc.runID, err, tc.errPart)
			}
		})
	}
}
