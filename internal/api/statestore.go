package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/statestore"
	"github.com/weirflow/weir/internal/statevalue"
	"github.com/weirflow/weir/internal/store"
)

// StateCollection is one page of a scope's state entries (task state or
// asset state: the same shape) and how many there are in all.
type StateCollection struct {
	Entries      []core.StateEntry `json:"entries"`
	TotalEntries int               `json:"total_entries"`
}

// TaskStateKeyParam names one task-state key of a task instance.
type TaskStateKeyParam struct {
	TaskInstanceParam
	Key string `path:"key" doc:"state key"`
}

// AssetStateParam names an asset's state.
type AssetStateParam struct {
	AssetID int64 `path:"asset_id" doc:"asset id"`
}

// AssetStateKeyParam names one state key of an asset.
type AssetStateKeyParam struct {
	AssetStateParam
	Key string `path:"key" doc:"state key"`
}

// The inputs of each kind's operations; the handlers below serve both.
type (
	listTaskStateInput struct {
		TaskInstanceParam
		Page
	}
	setTaskStateInput struct {
		TaskStateKeyParam
		RawBody []byte `contentType:"application/json" doc:"{\"value\": <any JSON but null>, \"retention\": \"6h\" | \"7d\" | \"never\" (optional)}"`
	}
	clearTaskStateInput struct {
		TaskInstanceParam
		AllMapIndices bool `query:"all_map_indices" doc:"clear every map index of the task in the run"`
	}
	listAssetStateInput struct {
		AssetStateParam
		Page
	}
	setAssetStateInput struct {
		AssetStateKeyParam
		RawBody []byte `contentType:"application/json" doc:"{\"value\": <any JSON but null>} (asset state has no retention)"`
	}
)

// stateScope is implemented by every input: the scope it names.
func (p *TaskInstanceParam) stateScope() core.StateScope {
	return core.TaskScope(p.DagID, p.RunID, p.TaskID, p.MapIndex)
}
func (p *AssetStateParam) stateScope() core.StateScope { return core.AssetScope(p.AssetID) }

// stateKey is implemented by the inputs naming a key.
func (p *TaskStateKeyParam) stateKey() string  { return p.Key }
func (p *AssetStateKeyParam) stateKey() string { return p.Key }

// The rest of what the generic handlers read of their input.
func (in *listTaskStateInput) statePage() Page      { return in.Page }
func (in *listAssetStateInput) statePage() Page     { return in.Page }
func (in *setTaskStateInput) stateBody() []byte     { return in.RawBody }
func (in *setAssetStateInput) stateBody() []byte    { return in.RawBody }
func (in *clearTaskStateInput) allMapIndices() bool { return in.AllMapIndices }
func (p *AssetStateParam) allMapIndices() bool      { return false }

type (
	scopedInput interface{ stateScope() core.StateScope }
	keyInput    interface {
		scopedInput
		stateKey() string
	}
	listInput interface {
		scopedInput
		statePage() Page
	}
	setInput interface {
		keyInput
		stateBody() []byte
	}
	clearInput interface {
		scopedInput
		allMapIndices() bool
	}
)

// Pointers to input types (huma passes *T): how the generic handlers reach
// what an input's pointer methods say.
type (
	listPtr[T any] interface {
		*T
		listInput
	}
	keyPtr[T any] interface {
		*T
		keyInput
	}
	setPtr[T any] interface {
		*T
		setInput
	}
	clearPtr[T any] interface {
		*T
		clearInput
	}
)

// stateRoutes describes one kind's routes for registerStateRoutes.
type stateRoutes struct {
	kind  core.StateKind
	base  string // the collection's path
	tag   string
	what  string // "a task instance's task state", "an asset's state"
	write string // the description of PUT
}

func (s *server) registerTaskState() {
	registerStateRoutes[listTaskStateInput, TaskStateKeyParam, setTaskStateInput, clearTaskStateInput](s, stateRoutes{
		kind: core.StateTask, tag: "Task State", what: "a task instance's task state",
		base:  Prefix + "/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}/state-store",
		write: "The body is {\"value\": <JSON>, \"retention\": \"6h\" | \"7d\" | \"never\"}; expires_at is computed with the server's clock.",
	})
}

func (s *server) registerAssetState() {
	registerStateRoutes[listAssetStateInput, AssetStateKeyParam, setAssetStateInput, AssetStateParam](s, stateRoutes{
		kind: core.StateAsset, tag: "Asset State", what: "an asset's state",
		base:  Prefix + "/assets/{asset_id}/state-store",
		write: "The body is {\"value\": <JSON>}; asset state has no retention.",
	})
}

// registerStateRoutes adds one kind's five operations (list, get, set,
// delete, clear); every kind is served by the same handlers, and every
// change by the state service's audited admin edits.
func registerStateRoutes[L, K, S, C any, PL listPtr[L], PK keyPtr[K], PS setPtr[S], PC clearPtr[C]](s *server, r stateRoutes) {
	tags := []string{r.tag}
	op := func(id, method, path, summary string) huma.Operation {
		return huma.Operation{OperationID: fmt.Sprintf(id, r.kind), Method: method, Path: path, Tags: tags,
			Summary: summary, Errors: []int{http.StatusNotFound}}
	}
	list := op("get_%s_state_entries", http.MethodGet, r.base, "List "+r.what+" with metadata")
	list.Description = "One page of entries and total_entries. " + store.StateOrder(r.kind).Doc()
	list.Errors = append(list.Errors, http.StatusBadRequest)
	register(s, core.RoleViewer, list, func(ctx context.Context, in *L) (*struct{ Body StateCollection }, error) {
		return s.listState(ctx, PL(in))
	})
	register(s, core.RoleViewer, op("get_%s_state_entry", http.MethodGet, r.base+"/{key}", "Get one key of "+r.what),
		func(ctx context.Context, in *K) (*struct{ Body core.StateEntry }, error) {
			return s.getState(ctx, PK(in))
		})
	set := op("set_%s_state_entry", http.MethodPut, r.base+"/{key}", "Set one key of "+r.what)
	set.Description = r.write + " Recorded as written by the user. Audited."
	set.MaxBodyBytes = s.states.MaxBodyBytes()
	// The body is checked by statestore, whose messages name NaN, null, the
	// size limit or the retention at fault.
	set.SkipValidateBody = true
	set.Errors = append(set.Errors, http.StatusBadRequest, http.StatusRequestEntityTooLarge)
	register(s, statestore.EditRole, set, func(ctx context.Context, in *S) (*struct{ Body core.StateEntry }, error) {
		return s.setState(ctx, PS(in))
	})
	del := op("delete_%s_state_entry", http.MethodDelete, r.base+"/{key}", "Delete one key of "+r.what+" (absent is fine); audited")
	del.DefaultStatus = http.StatusNoContent
	register(s, statestore.EditRole, del, func(ctx context.Context, in *K) (*struct{}, error) {
		k := PK(in)
		return nil, s.problemOrNil(ctx, s.states.AdminDelete(ctx, actor(ctx), k.stateScope(), k.stateKey()))
	})
	clr := op("clear_%s_state", http.MethodDelete, r.base, "Clear "+r.what+"; audited")
	clr.DefaultStatus = http.StatusNoContent
	register(s, statestore.EditRole, clr, func(ctx context.Context, in *C) (*struct{}, error) {
		c := PC(in)
		return nil, s.problemOrNil(ctx, s.states.AdminClear(ctx, actor(ctx), c.stateScope(), c.allMapIndices()))
	})
}

// listState serves GET .../state-store: one page, counted in the database.
func (s *server) listState(ctx context.Context, in listInput) (*struct{ Body StateCollection }, error) {
	sc, err := s.states.Resolve(ctx, in.stateScope())
	if err != nil {
		return nil, s.problem(ctx, err)
	}
	rows, total, err := s.states.List(ctx, store.ListScope(sc, in.statePage().store()))
	if err != nil {
		return nil, s.problem(ctx, err)
	}
	return &struct{ Body StateCollection }{StateCollection{Entries: rows, TotalEntries: total}}, nil
}

// getState serves GET .../state-store/{key}.
func (s *server) getState(ctx context.Context, in keyInput) (*struct{ Body core.StateEntry }, error) {
	sc, err := s.states.Resolve(ctx, in.stateScope())
	if err != nil {
		return nil, s.problem(ctx, err)
	}
	e, err := s.states.Get(ctx, sc, in.stateKey())
	if errors.Is(err, core.ErrNotFound) {
		return nil, huma.NewError(http.StatusNotFound, fmt.Sprintf("no %s state key %q for %s", sc.Kind, in.stateKey(), sc.Describe()))
	}
	if err != nil {
		return nil, s.problem(ctx, err)
	}
	return &struct{ Body core.StateEntry }{*e}, nil
}

// setState serves PUT .../state-store/{key}: 400 for null, NaN, ±Inf or a
// bad retention, 413 over [state_store] max_value_bytes.
func (s *server) setState(ctx context.Context, in setInput) (*struct{ Body core.StateEntry }, error) {
	var body struct {
		Value     json.RawMessage `json:"value"`
		Retention json.RawMessage `json:"retention,omitempty"`
	}
	dec := json.NewDecoder(bytes.NewReader(in.stateBody()))
	dec.DisallowUnknownFields() // {"valu": 1} names the field, not "a value is required"
	err := dec.Decode(&body)
	if _, end := dec.Token(); err == nil && end != io.EOF { //nolint:errorlint // Token answers io.EOF itself
		err = errors.New("more after the body's JSON object")
	}
	if err != nil {
		if _, verr := statevalue.ParseValue(in.stateBody()); verr != nil {
			return nil, invalid(fmt.Sprintf("body: %v", verr))
		}
		return nil, invalid(fmt.Sprintf("body: want {\"value\": <json>, \"retention\": \"6h\"|\"never\"}: %v", err))
	}
	ret, err := statevalue.ParseRetentionJSON(body.Retention)
	if err != nil {
		return nil, s.problem(ctx, err)
	}
	e, err := s.states.AdminSet(ctx, actor(ctx), in.stateScope(), in.stateKey(), body.Value, ret)
	if err != nil {
		return nil, s.problem(ctx, err)
	}
	return &struct{ Body core.StateEntry }{*e}, nil
}

// problemOrNil is problem for a non-nil err.
func (s *server) problemOrNil(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	return s.problem(ctx, err)
}
