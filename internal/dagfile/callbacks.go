package dagfile

import (
	"strings"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/template"
)

// dagCallbackFields are the callback fields of a DAG
// (docs/emission.md#callbacks); a task's are in taskFields.
var dagCallbackFields = eventNames(core.DagCallbackEvents)

func eventNames(evs []core.CallbackEvent) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = string(ev)
	}
	return out
}

// callbackList decodes one event's callbacks: a command, a {command: ...}
// mapping, or a list of them.
func (d *decoder) callbackList(n *node, f field) []core.CallbackSpec {
	d.at(f, n)
	if n.kind != kSeq {
		if spec, ok := d.callbackSpec(n, f); ok {
			return []core.CallbackSpec{spec}
		}
		return nil
	}
	if len(n.items) == 0 {
		d.fail(n, f, "lists no callback; give a command, {command: ...}, or a list of them (or drop the field)")
		return nil
	}
	out := make([]core.CallbackSpec, 0, len(n.items))
	for i, item := range n.items {
		if spec, ok := d.callbackSpec(item, f.idx(i)); ok {
			out = append(out, spec)
		}
	}
	return out
}

// callbackSpec decodes one callback: a shell command, or a mapping with
// command.
func (d *decoder) callbackSpec(n *node, f field) (core.CallbackSpec, bool) {
	d.at(f, n)
	cmdField := f
	switch n.kind {
	case kScalar:
	case kMap:
		d.checkKeys(n, f, []string{"command"})
		cmd := n.get("command")
		if cmd == nil {
			d.fail(n, f.key("command"), "is required: the shell command the callback runs")
			return core.CallbackSpec{}, false
		}
		n, cmdField = cmd, f.key("command")
	default:
		d.fail(n, f, "must be a shell command or {command: ...}, not %s", describe(n))
		return core.CallbackSpec{}, false
	}
	s, ok := d.str(n, cmdField)
	if !ok {
		return core.CallbackSpec{}, false
	}
	if strings.TrimSpace(s) == "" {
		d.fail(n, cmdField, "is empty; give the shell command the callback runs")
		return core.CallbackSpec{}, false
	}
	if err := template.Check(cmdField.disp, s); err != nil {
		d.fail(n, cmdField, "%s", strings.TrimPrefix(err.Error(), cmdField.disp+": "))
		return core.CallbackSpec{}, false
	}
	return core.CallbackSpec{Command: s}, true
}

// taskCallback decodes a task's callback field name into t.
func (d *decoder) taskCallback(t *core.Task, name string, n *node, f field) {
	specs := d.callbackList(n, f)
	if len(specs) == 0 {
		return
	}
	if t.Callbacks == nil {
		t.Callbacks = &core.Callbacks{}
	}
	t.Callbacks.Set(core.CallbackEvent(name), specs)
}

// dagCallbacks decodes the DAG-level callbacks of document n.
func (d *decoder) dagCallbacks(n *node, dag *core.DAG) {
	for _, name := range dagCallbackFields {
		v := n.get(name)
		if v == nil {
			continue
		}
		if specs := d.callbackList(v, field{}.key(name)); len(specs) > 0 {
			if dag.Callbacks == nil {
				dag.Callbacks = &core.Callbacks{}
			}
			dag.Callbacks.Set(core.CallbackEvent(name), specs)
		}
	}
}
