package worker

import (
	"context"
	"errors"
	"fmt"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/operator"
	"github.com/weirflow/weir/internal/secrets"
	"github.com/weirflow/weir/internal/template"
)

// withVariables fetches the variables the task's templates read
// ({{ .var.value.KEY }}, {{ .var.json.KEY }}: docs/variables.md) through the
// Execution API and adds them to the template context; the value of a key
// that names a secret is masked in the try's log. A missing variable fails
// the try, naming it.
func withVariables(ctx context.Context, tc *execclient.Client, tctx, args map[string]any, red *operator.Redactor) (map[string]any, error) {
	refs := template.VariableRefs(args)
	if len(refs.Values)+len(refs.JSONs) == 0 {
		return tctx, nil
	}
	fetch := func(keys []string, form string) (map[string]string, error) {
		out := make(map[string]string, len(keys))
		for _, k := range keys {
			v, err := tc.Variable(ctx, k)
			if errors.Is(err, core.ErrNotFound) && refs.Optional[form+"."+k] {
				continue // var.value.get('k', default): the default applies
			}
			if errors.Is(err, core.ErrNotFound) {
				return nil, fmt.Errorf("variable %q does not exist (a template reads var.%s.%s); create it with weir variables set, "+
					"or read it with a default: var.%s.get('%s', fallback)", k, form, k, form, k)
			}
			if err != nil {
				return nil, fmt.Errorf("read variable %q: %w", k, err)
			}
			if secrets.SensitiveName(k) {
				red.Add(v)
			}
			out[k] = v
		}
		return out, nil
	}
	vs, err := fetch(refs.Values, "value")
	if err != nil {
		return nil, err
	}
	js, err := fetch(refs.JSONs, "json")
	if err != nil {
		return nil, err
	}
	return template.WithVariables(tctx, vs, js)
}
