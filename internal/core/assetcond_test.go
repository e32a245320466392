package core

import (
	"strings"
	"testing"
)

// TestAssetConditionMet is the truth table of docs/assets.md#conditional-schedules:
// each row is which assets have queued events, and whether each schedule
// runs.
func TestAssetConditionMet(t *testing.T) {
	t.Parallel()
	leaf := func(name string) AssetCondition { return AssetCondition{Ref: &AssetRef{Name: name}} }
	alias := AssetCondition{Ref: &AssetRef{Alias: "exports"}}
	allAB := AssetCondition{All: []AssetCondition{leaf("a"), leaf("b")}}
	anyAB := AssetCondition{Any: []AssetCondition{leaf("a"), leaf("b")}}
	nested := AssetCondition{All: []AssetCondition{anyAB, leaf("c")}}                               // (a | b) & c
	deep := AssetCondition{Any: []AssetCondition{allAB, {All: []AssetCondition{leaf("c"), alias}}}} // (a & b) | (c & alias:exports)
	conds := []*AssetCondition{&allAB, &anyAB, &nested, &deep}
	wantText := []string{"a & b", "a | b", "(a | b) & c", "(a & b) | (c & alias:exports)"}
	for i, c := range conds {
		if got := c.String(); got != wantText[i] {
			t.Errorf("condition %d prints %q, want %q", i, got, wantText[i])
		}
	}
	tests := []struct {
		queued string // the assets (and aliases) with queued events
		want   [4]bool
	}{
		{"", [4]bool{false, false, false, false}},
		{"a", [4]bool{false, true, false, false}},
		{"b", [4]bool{false, true, false, false}},
		{"c", [4]bool{false, false, false, false}},
		{"a b", [4]bool{true, true, false, true}},
		{"a c", [4]bool{false, true, true, false}},
		{"b c", [4]bool{false, true, true, false}},
		{"a b c", [4]bool{true, true, true, true}},
		{"c alias:exports", [4]bool{false, false, false, true}},
		{"alias:exports", [4]bool{false, false, false, false}},
	}
	for _, tc := range tests {
		has := func(r AssetRef) bool {
			for _, q := range strings.Fields(tc.queued) {
				if q == r.String() {
					return true
				}
			}
			return false
		}
		for i, c := range conds {
			if got := c.Met(has); got != tc.want[i] {
				t.Errorf("queued {%s}: %s is %v, want %v", tc.queued, wantText[i], got, tc.want[i])
			}
		}
	}
	if refs := deep.Refs(); len(refs) != 4 || refs[3].Alias != "exports" {
		t.Errorf("refs of %s = %v", wantText[3], refs)
	}
}

// TestSingleEventMeets: which schedules asset_runs: per_event accepts (one
// event of one asset must be able to start a run).
func TestSingleEventMeets(t *testing.T) {
	t.Parallel()
	leaf := func(name string) AssetCondition { return AssetCondition{Ref: &AssetRef{Name: name}} }
	a, b, c := leaf("a"), leaf("b"), leaf("c")
	tests := []struct {
		name string
		cond *AssetCondition
		refs []AssetRef
		want bool
	}{
		{"one asset", nil, []AssetRef{{Name: "a"}}, true},
		{"a list of two (all of them)", nil, []AssetRef{{Name: "a"}, {Name: "b"}}, false},
		{"a | b", &AssetCondition{Any: []AssetCondition{a, b}}, nil, true},
		{"a & b", &AssetCondition{All: []AssetCondition{a, b}}, nil, false},
		{"(a & b) | c", &AssetCondition{Any: []AssetCondition{{All: []AssetCondition{a, b}}, c}}, nil, true},
		{"(a | b) & c", &AssetCondition{All: []AssetCondition{{Any: []AssetCondition{a, b}}, c}}, nil, false},
		{"all of one alias", &AssetCondition{All: []AssetCondition{{Ref: &AssetRef{Alias: "x"}}}}, nil, true},
	}
	for _, tc := range tests {
		if got := SingleEventMeets(tc.cond, tc.refs); got != tc.want {
			t.Errorf("%s: SingleEventMeets = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// A DAG's schedule summary names its assets, as Airflow's "Asset" summary
// does, so that an asset-scheduled DAG is not shown as unscheduled.
func TestScheduleSummary(t *testing.T) {
	a, b, c := AssetRef{Name: "a"}, AssetRef{Name: "b"}, AssetRef{URI: "s3://x/c"}
	for _, tc := range []struct {
		dag  DAG
		want string
	}{
		{DAG{}, ""},
		{DAG{Schedule: "@daily"}, "@daily"},
		{DAG{AssetSchedule: []AssetRef{a}}, "Asset: a"},
		{DAG{AssetSchedule: []AssetRef{a, c}}, "Asset: a & uri:s3://x/c"},
		{DAG{AssetSchedule: []AssetRef{a, b, c}, AssetCondition: &AssetCondition{All: []AssetCondition{
			{Any: []AssetCondition{{Ref: &a}, {Ref: &b}}}, {Ref: &c}}}}, "Asset: (a | b) & uri:s3://x/c"},
		{DAG{Schedule: "0 6 * * *", AssetOrTime: true, AssetSchedule: []AssetRef{a}}, "0 6 * * * or Asset: a"},
	} {
		if got := tc.dag.ScheduleSummary(); got != tc.want {
			t.Errorf("ScheduleSummary(%+v) = %q, want %q", tc.dag, got, tc.want)
		}
	}
}
