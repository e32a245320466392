package runs

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/core"
)

func TestCheckTaskDeferral(t *testing.T) {
	t.Parallel()
	task := &core.Task{TaskID: "t", Operator: "bash", Connections: []string{"warehouse"}}
	spec := func(typ, kwargs string) core.Deferral {
		return core.Deferral{Trigger: core.TriggerSpec{Type: typ, Kwargs: json.RawMessage(kwargs)}}
	}
	cases := []struct {
		name  string
		d     core.Deferral
		rules DeferralRules
		want  string // "" = allowed
	}{
		{"a timer", spec("timedelta", `{"delta":"1s"}`), DeferralRules{}, ""},
		{"command is for DAG-declared sensors", spec("command", `{"command":"id"}`), DeferralRules{}, "may not defer on a command trigger"},
		{"a deployment may allow command", spec("command", `{"command":"id"}`), DeferralRules{TaskTriggerTypes: []string{"command"}}, ""},
		{"an unlisted custom type", spec("queue_depth", `{}`), DeferralRules{}, "may not defer on a queue_depth trigger"},
		{"a declared connection", spec("sql", `{"conn_id":"warehouse","sql":"select 1"}`), DeferralRules{}, ""},
		{"an undeclared connection", spec("sql", `{"conn_id":"billing","sql":"select 1"}`), DeferralRules{}, `conn_id "billing" is not a connection the task declares`},
		{"an undeclared http connection", spec("http", `{"http_conn_id":"admin_api","endpoint":"/"}`), DeferralRules{}, `http_conn_id "admin_api"`},
		{"any connection when allowed", spec("sql", `{"conn_id":"billing","sql":"select 1"}`), DeferralRules{AllowAnyConnection: true}, ""},
		// encoding/json takes a name in any case: each spelling is checked.
		{"an undeclared connection spelt in capitals", spec("sql", `{"CONN_ID":"billing","sql":"select 1"}`), DeferralRules{}, `CONN_ID "billing" is not a connection`},
		{"a declared connection beside an undeclared spelling", spec("sql", `{"conn_id":"warehouse","Conn_Id":"billing","sql":"select 1"}`), DeferralRules{}, `Conn_Id "billing"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := CheckTaskDeferral(task, c.d, c.rules)
			switch {
			case c.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case c.want != "" && (err == nil || !errors.Is(err, core.ErrForbidden) || !strings.Contains(err.Error(), c.want)):
				t.Errorf("err = %v, want a forbidden error containing %q", err, c.want)
			}
		})
	}
}
