package weir

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/dagfile"
	"github.com/weirflow/weir/internal/operator"
)

// gateType is a custom trigger type for these tests: it fires at once
// with {"gate": <name>}; its only kwarg is name (required).
var gateType = TriggerType{
	Name:    "sdk_test_gate",
	Summary: "fires at once",
	New: func(kwargs json.RawMessage) (Trigger, error) {
		var kw struct {
			Name string `json:"name"`
		}
		if err := DecodeTriggerKwargs(kwargs, &kw); err != nil {
			return nil, err
		}
		if kw.Name == "" {
			return nil, InvalidKwarg("name", "is required")
		}
		return gate(kw.Name), nil
	},
}

type gate string

func (g gate) Run(ctx context.Context, rt *TriggerRuntime) error {
	rt.Logf("gate %s opens", string(g))
	return rt.Emit(ctx, map[string]string{"gate": string(g)})
}

// TestGoTasksDeferAndResume runs Go tasks that defer in-process (`dags
// test`: api-server, scheduler, triggerer and worker on real SQLite): a
// named resume method reading the event and next kwargs, a task resuming
// into its own function, a task that starts from its trigger, a custom
// trigger type, a sensor, and defer calls refused for their kwargs.
func TestGoTasksDeferAndResume(t *testing.T) {
	t.Parallel()
	var selfCalls, startCalls, refusedCalls atomic.Int32
	d := NewDAG("sdk_defer")
	d.Go("named", func(_ context.Context, tc *TaskContext) (any, error) {
		if _, resumed := tc.Resumed(); resumed {
			return nil, errors.New("the first step ran again on resume")
		}
		return nil, tc.Defer(TimeDelta(time.Second), "check", NextKwargs(map[string]any{"batch": 7}),
			DeferTimeout(10*time.Minute))
	}, OnResume("check", func(_ context.Context, tc *TaskContext) (any, error) {
		method, _ := tc.Resumed()
		ev, err := TriggerEvent[struct {
			Moment time.Time `json:"moment"`
		}](tc)
		if err != nil {
			return nil, err
		}
		batch, err := NextKwarg[int](tc, "batch")
		if err != nil {
			return nil, err
		}
		if _, err := NextKwarg[int](tc, "missing"); !errors.Is(err, ErrNotFound) {
			return nil, fmt.Errorf("a missing next kwarg: got %v, want ErrNotFound", err) //nolint:errorlint // reports the wrong error
		}
		return fmt.Sprintf("method=%s batch=%d fired=%t", method, batch, !ev.Moment.IsZero()), nil
	}))
	d.Go("self", func(_ context.Context, tc *TaskContext) (any, error) {
		n := selfCalls.Add(1)
		if method, resumed := tc.Resumed(); resumed {
			return fmt.Sprintf("call %d resumed with method %q", n, method), nil
		}
		if _, err := TriggerEvent[any](tc); err == nil {
			return nil, errors.New("TriggerEvent succeeded on a first step")
		}
		return nil, tc.Defer(TimeDelta(0), "")
	})
	d.Go("start", func(_ context.Context, tc *TaskContext) (any, error) {
		n := startCalls.Add(1)
		ev, err := TriggerEvent[map[string]string](tc)
		if err != nil {
			return nil, err
		}
		return fmt.Sprintf("call %d gate=%s", n, ev["gate"]), nil
	}, StartFromTrigger(TriggerSpec{Type: "sdk_test_gate", Kwargs: json.RawMessage(`{"name": "{{ .dag_id }}"}`)}, ""))
	d.Go("custom", func(_ context.Context, tc *TaskContext) (any, error) {
		spec, err := NewTrigger("sdk_test_gate", map[string]string{"name": "east"})
		if err != nil {
			return nil, err
		}
		return nil, tc.Defer(spec, "opened")
	}, OnResume("opened", func(_ context.Context, tc *TaskContext) (any, error) {
		return TriggerEvent[map[string]string](tc)
	}))
	d.Go("refused", func(_ context.Context, tc *TaskContext) (any, error) {
		refusedCalls.Add(1)
		var msgs []string
		for _, spec := range []TriggerSpec{
			{Type: "sdk_test_gate", Kwargs: json.RawMessage(`{"nmae": "x"}`)},
			{Type: "sdk_test_gate", Kwargs: json.RawMessage(`{}`)},
			{Type: "timedelta", Kwargs: json.RawMessage(`{"delta": "soon"}`)},
			{Type: "no_such_type"},
		} {
			err := tc.Defer(spec, "")
			if de := (*operator.DeferError)(nil); err == nil || errors.As(err, &de) {
				return nil, fmt.Errorf("Defer(%s %s) was accepted", spec.Type, spec.Kwargs)
			}
			msgs = append(msgs, err.Error())
		}
		if err := tc.Defer(TimeDelta(time.Second), "", DeferTimeout(-time.Second)); err != nil {
			msgs = append(msgs, err.Error())
		}
		if err := tc.Defer(TimeDelta(time.Second), "chek"); err != nil { // a typo would fail only after the wait
			msgs = append(msgs, err.Error())
		}
		return msgs, nil // the try ends here, deferring nothing
	})
	sensed := d.Sensor("sense", TriggerSpec{Type: "sdk_test_gate", Kwargs: json.RawMessage(`{"name": "north"}`)})
	d.Go("use", func(ctx context.Context, tc *TaskContext) (any, error) {
		return XComPull[map[string]string](ctx, tc, "sense")
	}, DependsOn(sensed))

	home := t.TempDir()
	// Running code defers only on [triggerer] task_trigger_types: the
	// deployment opts the custom type in (docs/security.md#triggers).
	toml := "[triggerer]\ntask_trigger_types = [\"timedelta\", \"sdk_test_gate\"]\n"
	if err := os.WriteFile(filepath.Join(home, "weir.toml"), []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := runWith(t.Context(), []string{"dags", "test", "sdk_defer", "--home", home}, &stdout, &stderr, []*DAG{d}, []TriggerType{gateType})
	if code != 0 {
		t.Fatalf("exit code %d, want 0\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	st := openStore(t, home)
	for task, want := range map[string]string{
		"named":  `"method=check batch=7 fired=true"`,
		"self":   `"call 2 resumed with method \"\""`,
		"start":  `"call 1 gate=sdk_defer"`, // no first step: one call, kwargs rendered
		"custom": `{"gate":"east"}`,
		"use":    `{"gate":"north"}`, // the sensor's event is its XCom
	} {
		if got := returnValue(t, st, "sdk_defer", task, -1); got != want {
			t.Errorf("%s returned %s, want %s", task, got, want)
		}
	}
	var refused []string
	if err := json.Unmarshal([]byte(returnValue(t, st, "sdk_defer", "refused", -1)), &refused); err != nil {
		t.Fatal(err)
	}
	wantRefused := []string{
		`defer task refused: trigger sdk_test_gate: kwargs: unknown kwarg "nmae"`,
		`defer task refused: trigger sdk_test_gate: kwarg "name" is required`,
		`defer task refused: trigger timedelta: kwargs: kwarg "delta": invalid duration "soon"`,
		`defer task refused: unknown trigger type "no_such_type"`,
		`defer task refused: timeout must not be negative`,
		`defer task refused: resume method "chek" is not registered with weir.OnResume on this task (registered: [])`,
	}
	if len(refused) != len(wantRefused) {
		t.Fatalf("refused defer calls: %q, want %d errors", refused, len(wantRefused))
	}
	for i, w := range wantRefused {
		if !strings.HasPrefix(refused[i], w) {
			t.Errorf("refused defer %d: %q, want it to start with %q", i, refused[i], w)
		}
	}
	if n := refusedCalls.Load(); n != 1 {
		t.Errorf("refused ran %d times, want 1: a refused Defer defers nothing", n)
	}
	for task, state := range taskStates(t, st, "sdk_defer") {
		if state != "success" {
			t.Errorf("%s is %s, want success", task, state)
		}
	}
}

// TestTriggersCheckedWhenValidated: a DAG whose tasks wait on an unknown
// trigger type, or on kwargs their type refuses, is refused by Validate
// and by Main (before anything runs), naming the task and field; a custom
// type is known only to the program that registers it.
func TestTriggersCheckedWhenValidated(t *testing.T) {
	t.Parallel()
	d := NewDAG("bad_triggers")
	d.Go("start", nop, StartFromTrigger(TriggerSpec{Type: "no_such_type"}, ""))
	d.Sensor("sense", TimeDelta(time.Minute), PokeInterval(time.Second))
	d.Sensor("worded", TriggerSpec{Type: "file", Kwargs: json.RawMessage(`["not", "an", "object"]`)})
	d.Go("go", nop, PokeMode())
	d.Go("later", nop, StartFromTrigger(TimeDelta(time.Second), "", DeferTimeout(-time.Minute)))
	err := d.Validate()
	if err == nil {
		t.Fatal("Validate accepted triggers it should refuse")
	}
	for _, want := range []string{
		`dag "bad_triggers": tasks.start.start_trigger: unknown trigger type "no_such_type"`,
		`dag "bad_triggers": tasks.sense.trigger: trigger timedelta: kwargs: unknown kwarg "poke_interval"`,
		`dag "bad_triggers": tasks.worded.trigger: the kwargs of a file trigger must be a JSON object`,
		`dag "bad_triggers": tasks.go.mode: PokeMode applies to sensor tasks only, not go tasks`,
		`dag "bad_triggers": tasks.later.start_trigger: timeout must not be negative`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Validate does not say %q:\n%v", want, err)
		}
	}

	custom := NewDAG("custom_trigger")
	custom.Go("wait", nop, StartFromTrigger(TriggerSpec{Type: "sdk_test_gate", Kwargs: json.RawMessage(`{"name": "a"}`)}, ""))
	for _, c := range []struct {
		name     string
		dags     []*DAG
		triggers []TriggerType
		want     string
	}{
		{"unknown type", []*DAG{d}, nil, `tasks.start.start_trigger: unknown trigger type "no_such_type"`},
		{"custom type not registered", []*DAG{custom}, nil, `tasks.wait.start_trigger: unknown trigger type "sdk_test_gate"`},
		{"custom type named twice", []*DAG{custom}, []TriggerType{gateType, gateType}, `trigger type "sdk_test_gate" is already registered`},
	} {
		var stdout, stderr bytes.Buffer
		home := t.TempDir()
		if code := runWith(t.Context(), []string{"db", "migrate", "--home", home}, &stdout, &stderr, c.dags, c.triggers); code != ExitInvalid {
			t.Errorf("%s: exit code %d, want %d; stderr:\n%s", c.name, code, ExitInvalid, stderr.String())
		}
		if !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%s: stderr does not say %q:\n%s", c.name, c.want, stderr.String())
		}
	}
	var stdout, stderr bytes.Buffer
	if code := runWith(t.Context(), []string{"db", "migrate", "--home", t.TempDir()}, &stdout, &stderr,
		[]*DAG{custom}, []TriggerType{gateType}); code != 0 {
		t.Errorf("a DAG naming a registered custom type: exit code %d\n%s", code, stderr.String())
	}
}

// TestRegisterTriggerRefusesTakenNames: a custom type cannot take a
// built-in type's name, nor be nameless or without New; nothing is
// registered then.
func TestRegisterTriggerRefusesTakenNames(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		typ  TriggerType
		want error
	}{
		{TriggerType{Name: "file", New: gateType.New}, core.ErrConflict},
		{TriggerType{Name: "has space", New: gateType.New}, core.ErrInvalid},
		{TriggerType{Name: "no_new"}, core.ErrInvalid},
	} {
		if err := RegisterTrigger(c.typ); !errors.Is(err, c.want) {
			t.Errorf("RegisterTrigger(%q) = %v, want %v", c.typ.Name, err, c.want)
		}
	}
}

// TestSensorMatchesYAML: Sensor builds the canonical form a DAG file's
// sensor task gets, in both modes, so the processor sees one version.
func TestSensorMatchesYAML(t *testing.T) {
	t.Parallel()
	yaml := `
dag_id: sensors
tasks:
  - task_id: wait
    operator: sensor
    trigger: {type: file, path: /data/*.csv, min_size: 1}
    poke_interval: 30s
    timeout: 1h
  - task_id: poke
    operator: sensor
    mode: poke
    trigger: {type: timedelta, delta: 1m0s}
    timeout: 10m
    retries: 2
`
	dags, err := dagfile.LoadWith("sensors.yaml", []byte(yaml), dagfile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := dags[0]
	want.FileLoc = fileLoc

	d := NewDAG("sensors")
	files, err := NewTrigger("file", map[string]any{"path": "/data/*.csv", "min_size": 1})
	if err != nil {
		t.Fatal(err)
	}
	d.Sensor("wait", files, PokeInterval(30*time.Second), SensorTimeout(time.Hour))
	d.Sensor("poke", TimeDelta(time.Minute), PokeMode(), SensorTimeout(10*time.Minute), Retries(2))
	assertSameAsYAML(t, want, d)
}
