package template

import (
	"fmt"
	"strings"

	"github.com/nikolalohinski/gonja/v2/nodes"
)

// unquotedJinja is UnquotedTriggerData for a Jinja template: each
// {{ ... }} that reads params, conf or dag_run.conf and does not end with
// the shquote filter. A value first bound with set or for is not followed.
func unquotedJinja(s string) []string {
	t, err := parseJinja("bash_command", s)
	if err != nil {
		return nil
	}
	var found []string
	walkNodes(t.Root(), func(n nodes.Node) bool {
		out, ok := n.(*nodes.Output)
		if !ok {
			return true
		}
		if f, ok := out.Expression.(*nodes.FilteredExpression); ok && len(f.Filters) > 0 && f.Filters[len(f.Filters)-1].Name == quoteFunc {
			return false
		}
		var reads []string
		visitNames(out.Expression, func(ident []string) {
			if triggerField(ident) {
				reads = append(reads, strings.Join(ident, "."))
			}
		})
		if len(reads) > 0 {
			found = append(found, fmt.Sprintf("{{ %s }} at line %d, column %d", reads[0], out.Start.Line, out.Start.Col))
		}
		return false
	})
	return found
}
