package core

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestRunImmediatelyJSON checks the DAG version's form of run_immediately,
// Airflow's bool | timedelta: true, false or a duration string.
func TestRunImmediatelyJSON(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		r    RunImmediately
		json string
	}{
		{RunImmediately{}, `true`},
		{RunImmediately{Never: true}, `false`},
		{RunImmediately{Within: Duration(90 * time.Minute)}, `"1h30m0s"`},
	} {
		b, err := json.Marshal(tc.r)
		if err != nil || string(b) != tc.json {
			t.Errorf("Marshal(%+v) = %s, %v; want %s", tc.r, b, err, tc.json)
		}
		var back RunImmediately
		if err := json.Unmarshal(b, &back); err != nil || back != tc.r {
			t.Errorf("Unmarshal(%s) = %+v, %v; want %+v", b, back, err, tc.r)
		}
	}
	for _, bad := range []string{`"0s"`, `"-5m"`, `"soon"`, `1`} {
		var r RunImmediately
		if err := json.Unmarshal([]byte(bad), &r); err == nil || !strings.Contains(err.Error(), "run_immediately must be") {
			t.Errorf("Unmarshal(%s): err = %v, want a run_immediately error", bad, err)
		}
	}
}
