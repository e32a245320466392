package runs

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weirflow/weir/internal/core"
)

// relativesDAG: extract → transform → load → report; extract → audit →
// report; notify alone.
var relativesDAG = &core.DAG{DagID: "etl", Tasks: []core.Task{
	{TaskID: "extract"}, {TaskID: "transform", DependsOn: []string{"extract"}},
	{TaskID: "audit", DependsOn: []string{"extract"}}, {TaskID: "load", DependsOn: []string{"transform"}},
	{TaskID: "report", DependsOn: []string{"load", "audit"}}, {TaskID: "notify"},
}}

func TestWithUpstream(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct{ in, want []string }{
		"a leaf takes every ancestor once":  {[]string{"report"}, []string{"extract", "transform", "audit", "load", "report"}},
		"a middle task":                     {[]string{"load"}, []string{"extract", "transform", "load"}},
		"a root is alone":                   {[]string{"extract"}, []string{"extract"}},
		"an unknown id is kept to be named": {[]string{"nope", "audit"}, []string{"extract", "audit", "nope"}},
	} {
		if got := WithUpstream(relativesDAG, c.in); !cmp.Equal(got, c.want) {
			t.Errorf("%s: WithUpstream(%v) = %v, want %v", name, c.in, got, c.want)
		}
	}
}

func TestWithDownstream(t *testing.T) {
	t.Parallel()
	spec := relativesDAG
	for name, c := range map[string]struct{ in, want []string }{
		"a root takes every descendant once": {[]string{"extract"}, []string{"extract", "transform", "audit", "load", "report"}},
		"a middle task":                      {[]string{"load"}, []string{"load", "report"}},
		"a leaf is alone":                    {[]string{"notify"}, []string{"notify"}},
		"overlapping picks":                  {[]string{"load", "transform"}, []string{"transform", "load", "report"}},
		"an unknown id is kept to be named":  {[]string{"nope", "load"}, []string{"load", "report", "nope"}},
	} {
		if got := WithDownstream(spec, c.in); !cmp.Equal(got, c.want) {
			t.Errorf("%s: WithDownstream(%v) = %v, want %v", name, c.in, got, c.want)
		}
	}
}
