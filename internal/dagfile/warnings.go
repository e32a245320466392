package dagfile

import (
	"fmt"
	"strings"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/template"
)

// WarningUnquotedTriggerData is the type of the warning Warnings gives for
// a bash_command that prints trigger data unquoted.
const WarningUnquotedTriggerData = "unquoted trigger data"

// Warnings returns what is allowed but unsafe in a valid DAG, one message
// per task: a bash_command that templates .params, .conf or .dag_run.conf
// into the command text without shquote, so that whoever triggers a run
// (the op role) can inject shell commands. A warning never stops the DAG
// from loading.
func Warnings(d *core.DAG) []string {
	quoted := map[bool]string{false: "{{ .params.<name> | shquote }}", true: "{{ params.<name> | shquote }}"}
	var out []string
	for i := range d.Tasks {
		t := &d.Tasks[i]
		if t.Operator != "bash" {
			continue
		}
		cmd, _ := t.Args["bash_command"].(string)
		found := template.UnquotedTriggerData(d.TemplateSyntax, cmd)
		if len(found) == 0 {
			continue
		}
		out = append(out, fmt.Sprintf("task %q: bash_command prints trigger data without shquote: %s; "+
			"a run's conf could inject shell commands. Read the value from the environment "+
			"(\"$WEIR_PARAM_<NAME>\", \"$WEIR_CONF\") or quote it (%s)",
			t.TaskID, strings.Join(found, ", "), quoted[d.TemplateSyntax.IsJinja()]))
	}
	return out
}
