package weir

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/weirflow/weir/internal/core"
)

func nopCallback(context.Context, *CallbackContext) error { return nil }

// TestGoCallbacksCompile checks what Go callbacks declare: one spec per
// callback naming the function the worker runs and the outlets it may
// emit (added to the DAG's assets), and a clear problem for a nil function
// or an alias outlet.
func TestGoCallbacksCompile(t *testing.T) {
	t.Parallel()
	alerts := Asset("alerts", AssetURI("ops://alerts"))
	d := NewDAG("cbs", OnRunFailure(nopCallback, alerts), OnRunSuccess(nopCallback))
	d.Noop("a", OnFailure(nopCallback), OnFailure(nopCallback, alerts), OnRetry(nopCallback))
	spec, err := d.compile()
	if err != nil {
		t.Fatal(err)
	}
	want := &core.Callbacks{OnSuccess: []core.CallbackSpec{{Function: "cbs#on_success/0"}},
		OnFailure: []core.CallbackSpec{{Function: "cbs#on_failure/0", Outlets: []string{"alerts"}}}}
	if diff := cmp.Diff(want, spec.Callbacks); diff != "" {
		t.Errorf("DAG callbacks (-want +got):\n%s", diff)
	}
	want = &core.Callbacks{OnRetry: []core.CallbackSpec{{Function: "cbs.a#on_retry/0"}}, OnFailure: []core.CallbackSpec{
		{Function: "cbs.a#on_failure/0"}, {Function: "cbs.a#on_failure/1", Outlets: []string{"alerts"}}}}
	if diff := cmp.Diff(want, spec.Tasks[0].Callbacks); diff != "" {
		t.Errorf("task a's callbacks (-want +got):\n%s", diff)
	}
	if len(spec.Assets) != 1 || spec.Assets[0].Name != "alerts" {
		t.Errorf("assets %v, want alerts (a callback's outlet)", spec.Assets)
	}
	reg, err := triggerTypes(nil)
	if err != nil {
		t.Fatal(err)
	}
	_, funcs, err := compileAll([]*DAG{d}, checksOf(reg))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"cbs#on_success/0", "cbs#on_failure/0", "cbs.a#on_retry/0", "cbs.a#on_failure/1"} {
		if _, ok := funcs.Lookup("callback:" + name); !ok {
			t.Errorf("callback %s is not registered for the worker (registered: %v)", name, funcs.Names())
		}
	}

	bad := NewDAG("bad", OnRunFailure(nil))
	bad.Noop("a", OnSkipped(nopCallback, Alias("exports")))
	err = bad.Validate()
	for _, w := range []string{`dag "bad": on_failure[0]: a Go callback needs a function, got nil`,
		`dag "bad": tasks.a.on_skipped[0].outlets: a callback emits concrete assets; alias "exports" cannot be an outlet of a callback`} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("Validate() = %v; want it to say %q", err, w)
		}
	}
}

// TestCallbackEmitOutsideAWorker: a CallbackContext the worker did not
// make cannot emit.
func TestCallbackEmitOutsideAWorker(t *testing.T) {
	t.Parallel()
	if _, err := (&CallbackContext{}).Emit(t.Context(), Asset("alerts")); !errors.Is(err, ErrNoTry) {
		t.Errorf("Emit outside a worker: %v, want ErrNoTry", err)
	}
	if _, err := (&CallbackContext{}).Emit(t.Context(), Alias("a")); err == nil || !strings.Contains(err.Error(), "must be concrete") {
		t.Errorf("Emit of an alias: %v, want the alias refused", err)
	}
}
