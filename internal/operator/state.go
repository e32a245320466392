package operator

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/weirflow/weir/internal/core"
)

// State is a try's access to state (an execclient.Client satisfies it):
// its own task instance's task state (a scope of kind core.StateTask; the
// Execution API knows which instance from the try's token) and the state
// of the assets its task declares (core.AssetScopeByName or ByURI). Values
// are JSON; retention, for task state only, is "" (the default), "never"
// or a duration such as "6h".
type State interface {
	StateGet(ctx context.Context, scope core.StateScope, key string) (json.RawMessage, error)
	StateSet(ctx context.Context, scope core.StateScope, key string, value json.RawMessage, retention string) error
	StateDelete(ctx context.Context, scope core.StateScope, key string) error
	StateClear(ctx context.Context, scope core.StateScope, allMapIndices bool) error
	// DeclaredAssets lists the task's concrete inlets and outlets, once each.
	DeclaredAssets(ctx context.Context) ([]core.Asset, error)
}

// errNoState is returned when a try runs without an Execution API client.
var errNoState = errors.New("state: no Execution API client")

// stateOf returns the request's state access: req.State when set, else the
// worker's XCom client, the try's Execution API client, which serves state
// too.
func stateOf(req *Request) State {
	if req.State != nil {
		return req.State
	}
	st, _ := req.XCom.(State)
	return st
}

// State returns the try's state access (through the worker-side backend
// when one is configured); calls fail with an error when the try has no
// Execution API client.
func (tc TaskContext) State() State {
	if tc.state == nil {
		return noState{}
	}
	return tc.state
}

// noState answers every call with errNoState.
type noState struct{}

func (noState) StateGet(context.Context, core.StateScope, string) (json.RawMessage, error) {
	return nil, errNoState
}
func (noState) StateSet(context.Context, core.StateScope, string, json.RawMessage, string) error {
	return errNoState
}
func (noState) StateDelete(context.Context, core.StateScope, string) error { return errNoState }
func (noState) StateClear(context.Context, core.StateScope, bool) error    { return errNoState }
func (noState) DeclaredAssets(context.Context) ([]core.Asset, error)       { return nil, errNoState }
