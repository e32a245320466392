package dagfile

import (
	"github.com/weirflow/weir/internal/core"
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
		// A single callback is named as the first of a list, as
		// validateCallbacks names it.
		if spec, ok := d.callbackSpec(n, f.idx(0)); ok {
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

// callbackFields are the fields of a callback written as a mapping.
var callbackFields = []string{"command", "notifier", "conn_id", "asset", "partition_key", "extra"}

// callbackSpec decodes one callback: a shell command, or a mapping with a
// command or a notifier (validateCallbacks checks the combination).
func (d *decoder) callbackSpec(n *node, f field) (core.CallbackSpec, bool) {
	d.at(f, n)
	var spec core.CallbackSpec
	switch n.kind {
	case kScalar:
		s, ok := d.str(n, f)
		spec.Command = s
		return spec, ok
	case kMap:
		d.checkKeys(n, f, callbackFields)
		for i, k := range n.keys {
			name, v, kf := k.value.(string), n.vals[i], f.key(k.value.(string))
			d.at(kf, v)
			switch name {
			case "command":
				spec.Command, _ = d.str(v, kf)
			case "notifier":
				spec.Notifier, _ = d.str(v, kf)
			case "conn_id":
				spec.ConnID, _ = d.str(v, kf)
			case "asset":
				spec.Asset, _ = d.str(v, kf)
			case "partition_key":
				spec.PartitionKey, _ = d.str(v, kf)
			case "extra":
				if x, ok := d.toAny(v, kf); ok {
					if m, isMap := x.(map[string]any); isMap {
						spec.Extra = m
					} else {
						d.fail(v, kf, "must be a mapping (the event's extra), not %s", describe(v))
					}
				}
			}
		}
		return spec, true
	default:
		d.fail(n, f, "must be a shell command, {command: ...} or {notifier: ...}, not %s", describe(n))
		return spec, false
	}
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
