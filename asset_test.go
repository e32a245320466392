package weir

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/dagfile"
)

// TestAssetsCompileLikeYAML: a Go producer and consumer compile to the same
// definition a DAG file gives (assets defined once, references by name).
func TestAssetsCompileLikeYAML(t *testing.T) {
	t.Parallel()
	orders := Asset("orders", AssetURI("s3://lake/orders"), AssetGroup("sales"), AssetExtra(map[string]any{"format": "csv"}))
	d := NewDAG("cons", ScheduleOnAssets(orders))
	d.Noop("use", Inlets(orders), Outlets(Asset("report"), Alias("dyn")))
	got, err := d.compile()
	if err != nil {
		t.Fatal(err)
	}
	yaml := `
dag_id: cons
schedule: [orders]
assets:
  - {name: orders, uri: "s3://lake/orders", group: sales, extra: {format: csv}}
  - report
tasks:
  - {task_id: use, operator: noop, inlets: [orders], outlets: [report, {alias: dyn}]}
`
	want, err := dagfile.Load("x.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	want[0].FileLoc = got.FileLoc
	if diff := cmp.Diff(want[0], got); diff != "" {
		t.Errorf("Go DAG differs from the YAML DAG (-yaml +go):\n%s", diff)
	}
}

func TestAssetValidationErrors(t *testing.T) {
	t.Parallel()
	p := fileLoc + `: dag "d": `
	cases := []struct {
		name  string
		build func(d *DAG)
		want  string
	}{
		{"two uris for one name", func(d *DAG) {
			d.Noop("a", Outlets(Asset("orders", AssetURI("s3://a")), Asset("orders", AssetURI("s3://b"))))
		}, p + `assets[1].uri: asset "orders" is defined twice with different uris`},
		{"alias with spaces", func(d *DAG) { d.Noop("a", Inlets(Alias(" dyn"))) },
			p + `tasks.a.inlets[0]: the alias " dyn" must not start or end with spaces`},
		{"time and asset schedule", func(d *DAG) {
			Schedule("@daily")(d)
			StartDate(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC))(d)
			ScheduleOnAssets(Asset("orders"))(d)
			d.Noop("a")
		}, p + "schedule: a DAG has either a time schedule or a list of assets, not both"},
		{"outlets in default args", func(d *DAG) {
			DefaultArgs(Outlets(Asset("x")))(d)
			d.Noop("a")
		}, p + "tasks.a.outlets: Outlets cannot be a default arg"},
		{"bad uri", func(d *DAG) { d.Noop("a", Outlets(Asset("x", AssetURI("S3://a b")))) },
			p + `assets[0].uri: uri "S3://a b" may contain only printable ASCII characters without spaces`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			d := NewDAG("d")
			c.build(d)
			err := d.Validate()
			if err == nil || !strings.HasPrefix(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("Validate() = %v\nwant one problem starting with %s", err, c.want)
			}
		})
	}
}

// TestAssetRefsName checks what the spec stores for each kind of reference.
func TestAssetRefsName(t *testing.T) {
	t.Parallel()
	d := NewDAG("d")
	d.Noop("a", Outlets(Asset("s3://x"), Alias("al")))
	spec, err := d.compile()
	if err != nil {
		t.Fatal(err)
	}
	want := []core.AssetRef{{Name: "s3://x"}, {Alias: "al"}}
	if diff := cmp.Diff(want, spec.Tasks[0].Outlets); diff != "" {
		t.Errorf("outlets (-want +got):\n%s", diff)
	}
	if spec.Assets[0].URI != "s3://x" {
		t.Errorf("asset %+v: uri should default to the name", spec.Assets[0])
	}
}
