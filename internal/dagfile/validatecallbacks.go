package dagfile

import (
	"fmt"
	"slices"
	"strings"

	"github.com/weirflow/weir/internal/callback"
	"github.com/weirflow/weir/internal/core"
)

// validateCallbacks checks the callbacks of d and its tasks
// (docs/emission.md#callbacks): each is a command or a notifier, with the
// fields its notifier takes; an asset_event notifier names an asset of
// the DAG's assets; templates parse.
func validateCallbacks(ps *problems, d *core.DAG, syntax core.TemplateSyntax) {
	assets := make([]string, 0, len(d.Assets))
	for _, a := range d.Assets {
		assets = append(assets, a.Name)
	}
	check := func(prefix string, cbs *core.Callbacks, events []core.CallbackEvent) {
		for _, ev := range events {
			for i, spec := range cbs.For(ev) {
				validateCallback(ps, fmt.Sprintf("%s%s[%d]", prefix, ev, i), &spec, assets, syntax)
			}
		}
	}
	check("", d.Callbacks, core.DagCallbackEvents)
	for i := range d.Tasks {
		check(fmt.Sprintf("tasks[%d].", i), d.Tasks[i].Callbacks, core.TaskCallbackEvents)
	}
}

// callbackNames is a callback's template context, for the load-time check
// of its templates' names.
var callbackNames = callback.TemplateContext(&core.DagRun{}, nil, &core.Callback{})

func validateCallback(ps *problems, path string, spec *core.CallbackSpec, assets []string, syntax core.TemplateSyntax) {
	if spec.Function != "" {
		validateGoCallback(ps, path, spec, assets)
		return
	}
	if len(spec.Outlets) > 0 {
		ps.add(path+".outlets", "are a Go callback's (the assets its function may emit); a command or notifier takes none")
	}
	switch spec.Notifier {
	case "":
		if strings.TrimSpace(spec.Command) == "" {
			ps.add(path, "needs a command (a shell command) or a notifier (%s, %s)", core.NotifierWebhook, core.NotifierAssetEvent)
			return
		}
		checkTemplatesIn(ps, syntax, path+".command", spec.Command, callbackNames, "")
		if spec.ConnID != "" || spec.Asset != "" || spec.PartitionKey != "" || spec.Extra != nil {
			ps.add(path, "a command callback takes only command; conn_id, asset, partition_key and extra are a notifier's")
		}
		return
	case core.NotifierWebhook:
		if spec.ConnID == "" {
			ps.add(path+".conn_id", "is required: the connection whose URL the webhook posts to")
		}
		if spec.Asset != "" || spec.PartitionKey != "" || spec.Extra != nil {
			ps.add(path, "the webhook notifier takes conn_id only; asset, partition_key and extra are the asset_event notifier's")
		}
	case core.NotifierAssetEvent:
		switch {
		case spec.Asset == "":
			ps.add(path+".asset", "is required: the asset the notifier emits an event of (one of the DAG's assets)")
		case !slices.Contains(assets, spec.Asset):
			ps.add(path+".asset", "%q is not one of the DAG's assets; declare it under assets (declared: %s)", spec.Asset, listOrNone(assets))
		}
		if spec.ConnID != "" {
			ps.add(path+".conn_id", "is the webhook notifier's; the asset_event notifier takes asset, partition_key and extra")
		}
		checkTemplatesIn(ps, syntax, path+".partition_key", spec.PartitionKey, callbackNames, "")
		checkTemplatesIn(ps, syntax, path+".extra", spec.Extra, callbackNames, "")
	default:
		ps.add(path+".notifier", "unknown notifier %q; allowed: %s, %s", spec.Notifier, core.NotifierWebhook, core.NotifierAssetEvent)
		return
	}
	if spec.Command != "" {
		ps.add(path, "has both a command and a notifier; give one")
	}
}

// validateGoCallback checks a Go callback (the SDK's weir.OnFailure(fn),
// ...): a function and the outlets it may emit, each one of the DAG's
// assets, nothing of a command's or a notifier's.
func validateGoCallback(ps *problems, path string, spec *core.CallbackSpec, assets []string) {
	if spec.Command != "" || spec.Notifier != "" || spec.ConnID != "" || spec.Asset != "" || spec.PartitionKey != "" || spec.Extra != nil {
		ps.add(path, "a Go callback (function %q) takes only its function and outlets; command, notifier, conn_id, asset, partition_key and extra are not a function's", spec.Function)
	}
	for i, name := range spec.Outlets {
		if !slices.Contains(assets, name) {
			ps.add(fmt.Sprintf("%s.outlets[%d]", path, i), "%q is not one of the DAG's assets (declared: %s)", name, listOrNone(assets))
		}
	}
}

func listOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
