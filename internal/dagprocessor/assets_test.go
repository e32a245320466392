package dagprocessor

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/core"
)

const producerYAML = `dag_id: producer
assets: [{name: orders, uri: "s3://lake/orders"}, {name: raw, uri: "s3://lake/raw"}]
tasks:
  - {task_id: load, operator: noop, inlets: [raw], outlets: [orders]}
`

const consumerYAML = `dag_id: consumer
schedule: [orders]
assets: [{name: orders, uri: "s3://lake/orders"}]
tasks:
  - {task_id: use, operator: noop}
`

// assetNamed returns the asset name with what the store says of it.
func assetNamed(t *testing.T, p *Processor, name string) *core.AssetModel {
	t.Helper()
	a, err := storeOf(p).AssetGetByName(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	full, err := storeOf(p).AssetGet(t.Context(), a.ID)
	if err != nil {
		t.Fatal(err)
	}
	return full
}

// TestAssetsFollowDagFiles: assets are recorded with the DAG, stay active
// while some active DAG defines them, and become inactive (with the time)
// when the last file defining them goes (docs/requirements.md#as-5).
func TestAssetsFollowDagFiles(t *testing.T) {
	t.Parallel()
	p, dir := newProcessor(t)
	ctx := t.Context()
	prod, cons := filepath.Join(dir, "producer.yaml"), filepath.Join(dir, "consumer.yaml")
	write(t, prod, producerYAML)
	write(t, cons, consumerYAML)
	syncOnce(t, p)
	full := assetNamed(t, p, "orders")
	if !full.Active || len(full.ScheduledDags) != 1 || full.ScheduledDags[0].DagID != "consumer" ||
		len(full.Producing) != 1 || full.Producing[0].TaskID != "load" {
		t.Fatalf("orders = %+v, want active, scheduling consumer, produced by producer.load", full)
	}

	if err := os.Remove(prod); err != nil {
		t.Fatal(err)
	}
	syncOnce(t, p)
	raw, _ := storeOf(p).AssetGetByName(ctx, "raw")
	orders, _ := storeOf(p).AssetGetByName(ctx, "orders")
	if raw.Active || raw.InactiveSince == nil || !raw.InactiveSince.Equal(p.Clock.Now()) {
		t.Errorf("raw after its only DAG's file went: active=%v since=%v, want inactive since now", raw.Active, raw.InactiveSince)
	}
	if !orders.Active {
		t.Error("orders became inactive although consumer.yaml still defines it")
	}
}

// TestRestartedProcessorRederivesOnlyWhatCameBack: a processor that starts
// over (a restart, `dags test`) writes a DAG's asset references again only
// when its DAG changed, comes back or was last derived by another parser
// (ADR 0040): consumer's schedule on orders, removed behind the
// processors' backs, stays removed for the same parser and is written back
// by another (an upgraded binary); producer.yaml removed, then restored
// unchanged while no processor ran, makes raw active again.
func TestRestartedProcessorRederivesOnlyWhatCameBack(t *testing.T) {
	t.Parallel()
	p, dir := newProcessor(t)
	p.Parser = "build-1"
	ctx := t.Context()
	prod := filepath.Join(dir, "producer.yaml")
	write(t, prod, producerYAML)
	write(t, filepath.Join(dir, "consumer.yaml"), consumerYAML)
	syncOnce(t, p)
	restart := func(parser string) {
		t.Helper()
		syncOnce(t, &Processor{Store: p.Store, Dir: dir, Clock: p.Clock, PauseNew: true, Parser: parser})
	}
	scheduled := func() int {
		t.Helper()
		return len(assetNamed(t, p, "orders").ScheduledDags)
	}
	db := p.Store.(interface{ DB() *sql.DB }).DB()
	if _, err := db.ExecContext(ctx, `DELETE FROM dag_schedule_asset WHERE dag_id = 'consumer'`); err != nil {
		t.Fatal(err)
	}
	restart("build-1")
	if n := scheduled(); n != 0 {
		t.Errorf("the same parser, restarted, derived consumer again (%d dags scheduled on orders), want it left as recorded", n)
	}
	restart("build-2")
	if n := scheduled(); n != 1 {
		t.Errorf("another parser left %d dags scheduled on orders, want consumer derived again", n)
	}

	if err := os.Remove(prod); err != nil {
		t.Fatal(err)
	}
	restart("build-2")
	if raw, _ := storeOf(p).AssetGetByName(ctx, "raw"); raw.Active {
		t.Fatal("raw stayed active after its only DAG's file went")
	}
	write(t, prod, producerYAML)
	restart("build-2")
	raw, err := storeOf(p).AssetGetByName(ctx, "raw")
	if err != nil || !raw.Active || raw.InactiveSince != nil {
		t.Fatalf("raw after producer.yaml came back: %+v (%v), want active again", raw, err)
	}
}

// TestAssetConflictIsImportError: a file that gives an asset another uri
// than an active DAG does gets an import error and is not recorded.
func TestAssetConflictIsImportError(t *testing.T) {
	t.Parallel()
	p, dir := newProcessor(t)
	write(t, filepath.Join(dir, "a_producer.yaml"), producerYAML)
	bad := filepath.Join(dir, "b_rogue.yaml")
	write(t, bad, strings.ReplaceAll(strings.ReplaceAll(consumerYAML, "s3://lake/orders", "s3://elsewhere"), "consumer", "rogue"))
	syncOnce(t, p)
	if msg := importErrors(t, p)[bad]; !strings.Contains(msg, `dag producer defines asset "orders" with uri "s3://lake/orders"`) {
		t.Errorf("import error of %s = %q, want the clash with producer named", bad, msg)
	}
	if dagState(t, p, "rogue") != nil {
		t.Error("the DAG with the clashing asset was recorded")
	}
}
