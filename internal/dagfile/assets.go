package dagfile

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"unicode"

	"github.com/weirflow/weir/internal/core"
)

// MaxAssetLength is the longest asset name, uri, group or alias (Airflow's
// column width).
const MaxAssetLength = 1500

var uriSchemeRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9+.-]*$`) })

// assets decodes the top-level assets list: {name, uri, group, extra,
// watchers} mappings, or a string (the name; the uri defaults to it).
func (d *decoder) assets(n *node, f field) []core.Asset {
	d.at(f, n)
	if n.kind != kSeq {
		d.fail(n, f, "must be a list of assets ({name: n, uri: u}), not %s", describe(n))
		return nil
	}
	out := make([]core.Asset, 0, len(n.items))
	for i, item := range n.items {
		af := f.idx(i)
		d.at(af, item)
		var a core.Asset
		switch item.kind {
		case kScalar:
			a.Name, _ = d.str(item, af.key("name"))
		case kMap:
			d.checkKeys(item, af, []string{"name", "uri", "group", "extra", "watchers"})
			for _, k := range []struct {
				name string
				to   *string
			}{{"name", &a.Name}, {"uri", &a.URI}, {"group", &a.Group}} {
				if v := item.get(k.name); v != nil {
					*k.to, _ = d.str(v, af.key(k.name))
				}
			}
			if item.get("name") == nil && item.get("uri") == nil {
				d.fail(item, af, "an asset needs a name or a uri (or both)")
			}
			if v := item.get("extra"); v != nil {
				if v.kind != kMap {
					d.fail(v, af.key("extra"), "must be a mapping, not %s", describe(v))
				} else if x, ok := d.toAny(v, af.key("extra")); ok {
					a.Extra, _ = x.(map[string]any)
				}
			}
			if v := item.get("watchers"); v != nil {
				a.Watchers = d.watchers(v, af.key("watchers"))
			}
		default:
			d.fail(item, af, "an asset must be a name or a mapping {name, uri, group, extra}, not %s", describe(item))
		}
		out = append(out, a)
	}
	return out
}

// watchers decodes an asset's watchers: a list of {name, trigger: {type,
// kwargs...}} (docs/watchers.md).
func (d *decoder) watchers(n *node, f field) []core.AssetWatcher {
	d.at(f, n)
	if n.kind != kSeq {
		d.fail(n, f, "must be a list of watchers ({name: n, trigger: {type: t, ...}}), not %s", describe(n))
		return nil
	}
	out := make([]core.AssetWatcher, 0, len(n.items))
	for i, item := range n.items {
		wf := f.idx(i)
		d.at(wf, item)
		if item.kind != kMap {
			d.fail(item, wf, "a watcher must be a mapping {name: n, trigger: {type: t, ...}}, not %s", describe(item))
			continue
		}
		d.checkKeys(item, wf, []string{"name", "trigger"})
		var w core.AssetWatcher
		if v := item.get("name"); v != nil {
			d.at(wf.key("name"), v)
			w.Name, _ = d.str(v, wf.key("name"))
		}
		tf := wf.key("trigger")
		v := item.get("trigger")
		switch {
		case v == nil:
		case v.kind != kMap:
			d.at(tf, v)
			d.fail(v, tf, "must be a mapping {type: <trigger type>, <kwargs>...}, not %s", describe(v))
		default:
			d.at(tf, v)
			x, ok := d.toAny(v, tf)
			kwargs, _ := x.(map[string]any)
			if !ok || kwargs == nil {
				break
			}
			w.Trigger.Type, _ = kwargs["type"].(string)
			delete(kwargs, "type")
			b, err := json.Marshal(kwargs)
			if err != nil {
				d.fail(v, tf, "kwargs cannot be stored as JSON: %v", err)
			}
			w.Trigger.Kwargs = b
		}
		out = append(out, w)
	}
	return out
}

// assetRefs decodes a list of asset references (inlets, outlets, an asset
// schedule); a single reference is accepted for inlets and outlets.
func (d *decoder) assetRefs(n *node, f field) []core.AssetRef {
	d.at(f, n)
	if n.kind != kSeq {
		return []core.AssetRef{d.assetRef(n, f.idx(0))}
	}
	out := make([]core.AssetRef, 0, len(n.items))
	for i, item := range n.items {
		out = append(out, d.assetRef(item, f.idx(i)))
	}
	return out
}

// assetRef decodes an asset name, {name: n}, {uri: u} or {alias: a}.
func (d *decoder) assetRef(n *node, f field) core.AssetRef {
	d.at(f, n)
	var r core.AssetRef
	switch n.kind {
	case kScalar:
		r.Name, _ = d.str(n, f)
	case kMap:
		d.checkKeys(n, f, []string{"name", "uri", "alias"})
		if len(n.keys) != 1 {
			d.fail(n, f, "an asset reference has exactly one of name, uri or alias")
			return r
		}
		for _, k := range []struct {
			name string
			to   *string
		}{{"name", &r.Name}, {"uri", &r.URI}, {"alias", &r.Alias}} {
			if v := n.get(k.name); v != nil {
				*k.to, _ = d.str(v, f)
			}
		}
	default:
		d.fail(n, f, "must be an asset name, {name: n}, {uri: u} or {alias: a}, not %s", describe(n))
	}
	return r
}

// applyAssetDefaults gives an asset defined by name only its name as uri,
// and one defined by uri only its uri as name (as Airflow does).
func applyAssetDefaults(d *core.DAG) {
	for i := range d.Assets {
		a := &d.Assets[i]
		if a.URI == "" {
			a.URI = a.Name
		}
		if a.Name == "" {
			a.Name = a.URI
		}
	}
}

// validateAssets checks asset definitions (name, uri and group syntax, each
// defined once, their watchers), the asset schedule and every task's
// inlets and outlets (known assets, or aliases: docs/assets.md#aliases).
func validateAssets(ps *problems, d *core.DAG, o Options) {
	names, uris := map[string]int{}, map[string]int{}
	var known []string
	for i, a := range d.Assets {
		p := fmt.Sprintf("assets[%d]", i)
		checkAssetText(ps, p+".name", "name", a.Name)
		checkAssetURI(ps, p+".uri", a.URI)
		if a.Group != "" {
			checkAssetText(ps, p+".group", "group", a.Group)
		}
		if _, err := json.Marshal(a.Extra); err != nil {
			ps.add(p+".extra", "value cannot be stored as JSON: %v", err)
		}
		if j, dup := names[a.Name]; dup && a.Name != "" {
			if d.Assets[j].URI != a.URI {
				ps.add(p+".uri", "asset %q is defined twice with different uris (%q at assets[%d], %q here)",
					a.Name, d.Assets[j].URI, j, a.URI)
			} else {
				ps.add(p+".name", "asset %q is defined twice (also assets[%d])", a.Name, j)
			}
		} else if j, dup := uris[a.URI]; dup && a.URI != "" {
			ps.add(p+".uri", "uri %q is already the uri of asset %q (assets[%d]); an asset has one name",
				a.URI, d.Assets[j].Name, j)
		}
		if _, seen := names[a.Name]; !seen && a.Name != "" {
			known = append(known, a.Name)
		}
		names[a.Name], uris[a.URI] = i, i
		validateWatchers(ps, p+".watchers", a.Watchers, o.CheckWatcher)
	}
	validateSchedule(ps, d, known)
	for j, r := range d.AssetSchedule {
		if d.AssetCondition == nil {
			checkAssetRef(ps, d, fmt.Sprintf("schedule[%d]", j), r, known)
		}
	}
	for i, t := range d.Tasks {
		for j, r := range t.Inlets {
			checkAssetRef(ps, d, fmt.Sprintf("tasks[%d].inlets[%d]", i, j), r, known)
		}
		for j, r := range t.Outlets {
			checkAssetRef(ps, d, fmt.Sprintf("tasks[%d].outlets[%d]", i, j), r, known)
		}
	}
}

// validateWatchers checks an asset's watchers: each a name (unique) and a
// trigger of a type that can watch (check, when set: the program's trigger
// types), no two with the same trigger.
func validateWatchers(ps *problems, path string, ws []core.AssetWatcher, check func(core.TriggerSpec) error) {
	names, specs := map[string]int{}, map[string]int{}
	for i, w := range ws {
		p := fmt.Sprintf("%s[%d]", path, i)
		checkID(ps, p+".name", w.Name)
		if j, dup := names[w.Name]; dup && w.Name != "" {
			ps.add(p+".name", "watcher %q is declared twice on this asset (also %s[%d])", w.Name, path, j)
		}
		names[w.Name] = i
		switch {
		case w.Trigger.Type == "" && w.Trigger.Kwargs == nil:
			ps.add(p+".trigger", "is required: {type: <trigger type>, <kwargs>...} (docs/watchers.md)")
			continue
		case w.Trigger.Type == "":
			ps.add(p+".trigger", "type is required: the watcher's trigger type (docs/watchers.md#watcher-reference)")
			continue
		}
		kw, _ := core.CanonicalJSON(w.Trigger.Kwargs)
		key := w.Trigger.Type + " " + kw
		if j, dup := specs[key]; dup {
			ps.add(p+".trigger", "is the same trigger as %s[%d]'s; one watcher per trigger on an asset", path, j)
		}
		specs[key] = i
		if check != nil {
			if err := check(w.Trigger); err != nil {
				ps.add(p+".trigger", "%v", err)
			}
		}
	}
}

// checkAssetRef checks that r names exactly one asset of the DAG or is an
// alias (allowed in the schedule, inlets and outlets alike).
func checkAssetRef(ps *problems, d *core.DAG, path string, r core.AssetRef, known []string) {
	set := 0
	for _, v := range []string{r.Name, r.URI, r.Alias} {
		if v != "" {
			set++
		}
	}
	switch {
	case set != 1:
		ps.add(path, "an asset reference has exactly one of name, uri or alias")
	case r.Alias != "":
		checkAssetText(ps, path, "alias", r.Alias)
	case d.Asset(r) == nil && r.URI != "":
		ps.add(path, "unknown asset uri %q; define the asset under assets", r.URI)
	case d.Asset(r) == nil:
		ps.add(path, "unknown asset %q%s; define it under assets (known: %s)", r.Name, didYouMean(r.Name, known), orNone(known))
	}
}

// checkAssetText checks a name, group or alias: non-empty, at most
// MaxAssetLength characters, no control characters or surrounding spaces.
func checkAssetText(ps *problems, path, what, s string) {
	switch {
	case s == "":
		ps.add(path, "the %s must not be empty", what)
	case len(s) > MaxAssetLength:
		ps.add(path, "the %s must be at most %d characters (it has %d)", what, MaxAssetLength, len(s))
	case strings.TrimSpace(s) != s:
		ps.add(path, "the %s %q must not start or end with spaces", what, s)
	case strings.IndexFunc(s, unicode.IsControl) >= 0:
		ps.add(path, "the %s %q must not contain control characters", what, s)
	}
}

// checkAssetURI checks a uri: printable ASCII without spaces, at most
// MaxAssetLength characters, and a lowercase scheme when it has one
// ("s3://bucket/key", "file:///data/x.csv"; a plain name is allowed).
func checkAssetURI(ps *problems, path, uri string) {
	if uri == "" {
		ps.add(path, "the uri must not be empty")
		return
	}
	if len(uri) > MaxAssetLength {
		ps.add(path, "the uri must be at most %d characters (it has %d)", MaxAssetLength, len(uri))
		return
	}
	for _, c := range uri {
		if c <= ' ' || c > '~' {
			ps.add(path, "uri %q may contain only printable ASCII characters without spaces", uri)
			return
		}
	}
	if scheme, _, ok := strings.Cut(uri, "://"); ok && !uriSchemeRe().MatchString(scheme) {
		ps.add(path, "uri %q has an invalid scheme %q: lowercase letters, digits, +, - and . starting with a letter",
			uri, scheme)
	}
}
