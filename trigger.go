package weir

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/operator"
	"github.com/weirflow/weir/internal/trigger"
	"github.com/weirflow/weir/internal/trigger/builtin"
)

// TriggerSpec is a trigger as a value: a registered type name and its JSON
// kwargs. Triggers are never closures: the spec is stored and rebuilt by
// type name in whichever triggerer runs it.
type TriggerSpec = core.TriggerSpec

// NewTrigger returns the spec of a trigger of type typ with kwargs (any
// JSON-encodable value, normally a map or a struct with json tags).
func NewTrigger(typ string, kwargs any) (TriggerSpec, error) {
	b, err := json.Marshal(kwargs)
	if err != nil {
		return TriggerSpec{}, fmt.Errorf("trigger %s: kwargs are not JSON-encodable: %w", typ, err)
	}
	return TriggerSpec{Type: typ, Kwargs: b}, nil
}

// TimeDelta is the spec of a trigger that fires d after the task deferred.
func TimeDelta(d time.Duration) TriggerSpec {
	return TriggerSpec{Type: "timedelta", Kwargs: mustJSON(map[string]string{"delta": d.String()})}
}

// DateTime is the spec of a trigger that fires at moment.
func DateTime(moment time.Time) TriggerSpec {
	return TriggerSpec{Type: "datetime", Kwargs: mustJSON(map[string]string{"moment": moment.UTC().Format(time.RFC3339Nano)})}
}

func mustJSON(v map[string]string) json.RawMessage {
	b, _ := json.Marshal(v) // a map of strings always encodes
	return b
}

// Custom trigger types: a Go program registers its own with
// RegisterTrigger before calling Main; every role of the deployment
// (scheduler, api-server, triggerer, workers) then runs that program, so
// DAG files and deferrals can name the type.
type (
	// TriggerType is a registered trigger type: its name, a one-line
	// summary, and New, which validates kwargs (without side effects)
	// and returns the trigger.
	TriggerType = trigger.Type
	// Trigger is a running trigger: Run waits and reports each event with
	// rt.Emit (which returns once the event is committed).
	Trigger = trigger.Trigger
	// TriggerRuntime is what a running trigger may use: Emit, Logf, the
	// clock, its creation time, connections.
	TriggerRuntime = trigger.Runtime
)

// DecodeTriggerKwargs decodes kwargs into out strictly (an unknown kwarg or
// a wrong type is an error naming it), for a TriggerType's New.
func DecodeTriggerKwargs(kwargs json.RawMessage, out any) error {
	return trigger.DecodeKwargs(kwargs, out)
}

// InvalidKwarg returns the error a TriggerType's New gives for a kwarg it
// refuses: `kwarg "name" <problem>`, as the built-in types word it.
func InvalidKwarg(name, format string, args ...any) error {
	return trigger.Invalid(name, format, args...)
}

var customTriggers []TriggerType

// RegisterTrigger adds a custom trigger type to the program Main runs. A
// name already taken, by a built-in type or an earlier registration, is
// refused (wrapping ErrConflict), as is a type without a valid name or a
// New function.
func RegisterTrigger(t TriggerType) error {
	if _, err := triggerTypes(append(slices.Clip(customTriggers), t)); err != nil {
		return err
	}
	customTriggers = append(customTriggers, t)
	return nil
}

// triggerTypes returns a registry of the built-in trigger types and custom.
func triggerTypes(custom []TriggerType) (*trigger.Registry, error) {
	reg := builtin.Registry()
	for _, t := range custom {
		if err := reg.Register(t); err != nil {
			return nil, err
		}
	}
	return reg, nil
}

// DeferOption tunes a deferral.
type DeferOption func(*deferral)

type deferral struct {
	core.Deferral
	err error
}

// DeferTimeout fails the try (retries follow as for any failure) when the
// trigger has not fired within d.
func DeferTimeout(d time.Duration) DeferOption {
	return func(df *deferral) { df.Timeout = core.Duration(d) }
}

// NextKwargs passes kwargs (a JSON-encodable map or struct) to the resumed
// try, which reads them with NextKwarg.
func NextKwargs(kwargs any) DeferOption {
	return func(df *deferral) {
		b, err := json.Marshal(kwargs)
		if err != nil {
			df.err = fmt.Errorf("next kwargs are not JSON-encodable: %w", err)
			return
		}
		df.NextKwargs = b
	}
}

func newDeferral(spec TriggerSpec, resume string, opts []DeferOption) (core.Deferral, error) {
	df := &deferral{Deferral: core.Deferral{Trigger: spec, NextMethod: resume}}
	for _, o := range opts {
		o(df)
	}
	return df.Deferral, df.err
}

// Defer hands the rest of the try to a trigger: return its result as the
// task's error. The worker slot is freed at once; when the trigger fires
// the try resumes on a worker by calling the function registered with
// OnResume(resume, ...) ("" = this task's function again), which reads the
// event with TriggerEvent. An unknown trigger type, kwargs the type refuses,
// a negative timeout or a resume method the task did not register with
// OnResume are returned as an error here and defer nothing.
//
//	return nil, tc.Defer(weir.TimeDelta(time.Minute), "check", weir.DeferTimeout(time.Hour))
func (tc *TaskContext) Defer(spec TriggerSpec, resume string, opts ...DeferOption) error {
	d, err := newDeferral(spec, resume, opts)
	if err == nil && resume != "" && !slices.Contains(tc.resumes, resume) {
		err = fmt.Errorf("resume method %q is not registered with weir.OnResume on this task (registered: %q)", resume, tc.resumes)
	}
	if err == nil {
		err = tc.op.CheckDeferral(d)
	}
	if err != nil {
		return fmt.Errorf("defer task %s: %w", tc.TaskID, err)
	}
	return operator.Defer(d)
}

// Resumed reports whether this call resumes a deferred try, and the
// resume method it named.
func (tc *TaskContext) Resumed() (method string, ok bool) {
	if tc.op.Resume == nil {
		return "", false
	}
	return tc.op.Resume.Method, true
}

// TriggerEvent decodes the payload of the trigger event that resumed the
// try into T.
func TriggerEvent[T any](tc *TaskContext) (T, error) {
	var v T
	if tc.op.Resume == nil || tc.op.Resume.Event == nil {
		return v, errors.New("this try did not resume from a trigger event")
	}
	if err := json.Unmarshal(tc.op.Resume.Event, &v); err != nil {
		return v, fmt.Errorf("decode the trigger event: %w", err)
	}
	return v, nil
}

// NextKwarg returns the deferral's next kwarg name decoded into T.
func NextKwarg[T any](tc *TaskContext, name string) (T, error) {
	kw := map[string]any{}
	if tc.op.Resume != nil && tc.op.Resume.Kwargs != nil {
		if err := json.Unmarshal(tc.op.Resume.Kwargs, &kw); err != nil {
			var zero T
			return zero, fmt.Errorf("decode next kwargs: %w", err)
		}
	}
	return lookup[T](kw, "next kwarg", name)
}

// OnResume registers fn as the task's resume method named method: a try
// that deferred with Defer(..., method, ...) resumes by calling it.
func OnResume(method string, fn TaskFunc) TaskOption {
	return func(t *Task) {
		switch {
		case t.inDefaults:
			t.problem("on_resume", "OnResume cannot be a default arg; set it on each task")
		case method == "" || fn == nil:
			t.problem("on_resume", "OnResume needs a method name and a function")
		case t.spec.Operator != operator.Go:
			t.problem("on_resume", "OnResume is for Go tasks, not %s", t.spec.Operator)
		default:
			if t.resumes == nil {
				t.resumes = map[string]TaskFunc{}
			}
			if _, dup := t.resumes[method]; dup {
				t.problem("on_resume", "resume method %q is registered twice", method)
			}
			t.resumes[method] = fn
		}
	}
}

// StartFromTrigger makes the task begin deferred on spec, in the
// triggerer, without a first worker step; it runs on a worker once the
// trigger fires, calling the resume method (or, with "", its function)
// with the event. String kwargs are templates rendered when each try
// starts ({{ ds }}, params, conf).
func StartFromTrigger(spec TriggerSpec, resume string, opts ...DeferOption) TaskOption {
	return func(t *Task) {
		d, err := newDeferral(spec, resume, opts)
		if err != nil {
			t.problem("start_trigger", "%v", err)
			return
		}
		t.spec.StartTrigger = &d
	}
}
