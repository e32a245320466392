package weir

import (
	"reflect"

	"github.com/weirflow/weir/internal/core"
)

// AssetRef is an asset (made with Asset) or an alias (made with Alias) that
// tasks read and update (Inlets, Outlets) and DAGs are scheduled on
// (ScheduleOnAssets). See docs/assets.md.
type AssetRef struct {
	def   *core.Asset
	alias string
}

// AssetOption sets a field of an asset; pass options to Asset.
type AssetOption func(*core.Asset)

// Asset names an asset. Its uri is the name unless AssetURI says otherwise;
// its group is "asset" unless AssetGroup says otherwise. Every DAG that uses
// an asset must define it the same way (same name and uri).
func Asset(name string, opts ...AssetOption) AssetRef {
	a := core.Asset{Name: name}
	for _, o := range opts {
		o(&a)
	}
	if a.URI == "" {
		a.URI = a.Name
	}
	return AssetRef{def: &a}
}

// AssetURI sets where the asset lives, such as "s3://lake/orders" or
// "file:///data/orders.csv".
func AssetURI(uri string) AssetOption { return func(a *core.Asset) { a.URI = uri } }

// AssetGroup sets the asset's group (default "asset").
func AssetGroup(group string) AssetOption { return func(a *core.Asset) { a.Group = group } }

// AssetExtra attaches JSON-encodable metadata to the asset.
func AssetExtra(extra map[string]any) AssetOption { return func(a *core.Asset) { a.Extra = extra } }

// Alias names an asset alias: a set of assets decided at run time. As an
// outlet, the task adds assets to it with TaskContext.AddToAlias (the alias
// produces no event of its own); as an inlet, the task reaches the assets
// it resolves to; in ScheduleOnAssets, the DAG runs on events of those
// assets (docs/assets.md#aliases).
func Alias(name string) AssetRef { return AssetRef{alias: name} }

// Inlets declares the assets the task reads.
func Inlets(assets ...AssetRef) TaskOption {
	return func(t *Task) {
		if t.inDefaults {
			t.problem("inlets", "Inlets cannot be a default arg; set it on each task")
			return
		}
		t.spec.Inlets = append(t.spec.Inlets, t.dag.useAssets(assets)...)
	}
}

// Outlets declares the assets the task updates: when a try succeeds, each
// concrete outlet gets an asset event, and DAGs scheduled on it may run.
func Outlets(assets ...AssetRef) TaskOption {
	return func(t *Task) {
		if t.inDefaults {
			t.problem("outlets", "Outlets cannot be a default arg; set it on each task")
			return
		}
		t.spec.Outlets = append(t.spec.Outlets, t.dag.useAssets(assets)...)
	}
}

// ScheduleOnAssets runs the DAG when every one of the assets has a new event
// since its last asset-triggered run (Airflow's schedule=[a, b]). A DAG has
// either this or a time Schedule.
func ScheduleOnAssets(assets ...AssetRef) DAGOption {
	return func(d *DAG) { d.spec.AssetSchedule = append(d.spec.AssetSchedule, d.useAssets(assets)...) }
}

// useAssets adds the definitions of refs to the DAG's assets (once each;
// a different definition under the same name is kept, for Validate to
// report) and returns the references the spec stores.
func (d *DAG) useAssets(refs []AssetRef) []core.AssetRef {
	out := make([]core.AssetRef, 0, len(refs))
	for _, r := range refs {
		if r.def == nil {
			out = append(out, core.AssetRef{Alias: r.alias})
			continue
		}
		known := false
		for _, a := range d.spec.Assets {
			known = known || reflect.DeepEqual(a, *r.def)
		}
		if !known {
			d.spec.Assets = append(d.spec.Assets, *r.def)
		}
		out = append(out, core.AssetRef{Name: r.def.Name})
	}
	return out
}
