package dagfile

import (
	"testing"
)

// Conditional and asset-or-time schedules load into the DAG's condition,
// with its references listed as the asset schedule
// (docs/assets.md#conditional-schedules).
func TestLoadAssetSchedules(t *testing.T) {
	t.Parallel()
	const head = "assets:\n  - {name: a, uri: \"s3://a\"}\n  - {name: b, uri: \"s3://b\"}\n  - {name: c, uri: \"s3://c\"}\n" +
		"tasks:\n  t: {operator: noop}\nstart_date: 2026-01-01\n"
	tests := []struct {
		schedule, cond, time string
		refs                 int
	}{
		{"[a, b]", "", "", 2},
		{"{any: [a, b]}", "a | b", "", 2},
		{"{all: [{any: [a, {uri: \"s3://b\"}]}, c]}", "(a | uri:s3://b) & c", "", 3},
		{"{any: [{alias: exports}, {all: [a, b]}]}", "alias:exports | (a & b)", "", 3},
		{"{cron: \"@daily\", assets: [a]}", "", "@daily", 1},
		{"{cron: \"0 1 * * 3\", assets: {any: [a, c]}}", "a | c", "0 1 * * 3", 2},
	}
	for _, tc := range tests {
		dags, err := Load("s.yaml", []byte("dag_id: d\nschedule: "+tc.schedule+"\n"+head))
		if err != nil {
			t.Errorf("schedule %s: %v", tc.schedule, err)
			continue
		}
		d := dags[0]
		cond := ""
		if d.AssetCondition != nil {
			cond = d.AssetCondition.String()
		}
		if cond != tc.cond || d.Schedule != tc.time || len(d.AssetSchedule) != tc.refs || d.AssetOrTime != (tc.time != "") {
			t.Errorf("schedule %s: condition %q, time %q, %d refs, asset-or-time %v; want %q, %q, %d",
				tc.schedule, cond, d.Schedule, len(d.AssetSchedule), d.AssetOrTime, tc.cond, tc.time, tc.refs)
		}
	}
}
