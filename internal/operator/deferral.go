package operator

import (
	"encoding/json"
	"fmt"

	"github.com/weirflow/weir/internal/core"
)

// DeferError is what an operator returns to defer its try: the worker
// reports the deferral and frees its slot; the try resumes, on any
// worker, when the trigger fires (Request.Resume then says how).
type DeferError struct {
	Deferral core.Deferral
}

func (e *DeferError) Error() string {
	return fmt.Sprintf("task deferred on a %s trigger", e.Deferral.Trigger.Type)
}

// Defer returns the error that defers a try on d.
func Defer(d core.Deferral) error { return &DeferError{Deferral: d} }

// Resume is how a deferred try resumes: the method it named, its
// next_kwargs, and the payload of the trigger event.
type Resume struct {
	Method string
	Kwargs json.RawMessage
	Event  json.RawMessage
}

// ResumeOf returns ti's resume, or nil for a try's first step.
func ResumeOf(ti *core.TaskInstance) *Resume {
	if ti.NextMethod == "" && ti.NextEvent == nil && ti.NextKwargs == nil {
		return nil
	}
	return &Resume{Method: ti.NextMethod, Kwargs: ti.NextKwargs, Event: ti.NextEvent}
}

// checkDeferral validates d against the Runner's trigger types, if any.
func (r *Runner) checkDeferral(d core.Deferral) error {
	if r.Triggers == nil {
		return nil
	}
	return r.Triggers.CheckDeferral(d)
}
