package ui

import "fmt"

// stateLook is how a task-instance or run state is shown: a colour (CSS
// class), and, so that colour is never the only carrier, an icon and a
// text label.
type stateLook struct {
	Name  string // the state as stored; "none" for no state
	Class string // CSS class: "s-success", ...
	Icon  string // one character
	Label string // for people: "up for retry"
}

// stateLooks follows Airflow's colours (docs/ui.md lists them); the icons
// tell the states apart without colour.
var stateLooks = map[string]stateLook{
	"success":         {Icon: "✓", Label: "success"},
	"failed":          {Icon: "✗", Label: "failed"},
	"running":         {Icon: "▶", Label: "running"},
	"queued":          {Icon: "…", Label: "queued"},
	"scheduled":       {Icon: "◷", Label: "scheduled"},
	"up_for_retry":    {Icon: "↻", Label: "up for retry"},
	"upstream_failed": {Icon: "⚠", Label: "upstream failed"},
	"skipped":         {Icon: "»", Label: "skipped"},
	"deferred":        {Icon: "‖", Label: "deferred"},
	"restarting":      {Icon: "⟲", Label: "restarting"},
	"removed":         {Icon: "−", Label: "removed"},
	"none":            {Icon: "·", Label: "no status"},
}

// stateOf returns how a state (a core.TIState, core.DagRunState or its
// string) is shown; an unknown state shows its name with a "?".
func stateOf(state any) stateLook {
	name := fmt.Sprint(state)
	if name == "" {
		name = "none"
	}
	l, ok := stateLooks[name]
	if !ok {
		l = stateLook{Icon: "?", Label: name}
	}
	l.Name, l.Class = name, "s-"+name
	return l
}
