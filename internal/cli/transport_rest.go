package cli

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/weirflow/weir/internal/api"
	"github.com/weirflow/weir/internal/apiclient"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/runs"
	"github.com/weirflow/weir/internal/service"
	"github.com/weirflow/weir/internal/store"
)

// restBackend is the backend over a deployment's REST API (/api/v2): each
// method is one or two API calls, authorized with the login's token as the
// user it belongs to. The api-server notifies its scheduler in-process, so
// a remote trigger starts as fast as any REST trigger.
type restBackend struct {
	c *apiclient.Client
}

var _ backend = (*restBackend)(nil)

// pageQuery is the API's limit/offset/order_by of p.
func pageQuery(p store.Page) url.Values {
	q := url.Values{}
	if p.Limit > 0 {
		q.Set("limit", strconv.Itoa(p.Limit))
	}
	q.Set("offset", strconv.Itoa(p.Offset))
	if p.OrderBy != "" {
		q.Set("order_by", p.OrderBy)
	}
	return q
}

// seg escapes one path segment (an id).
func seg(id string) string { return url.PathEscape(id) }

// DagList implements backend.
func (b *restBackend) DagList(ctx context.Context, p *store.DagListParams) ([]core.DagModel, int, error) {
	q := pageQuery(p.Page)
	q.Set("only_active", strconv.FormatBool(p.OnlyActive))
	if p.Paused != nil {
		q.Set("paused", strconv.FormatBool(*p.Paused))
	}
	var out api.DAGCollection
	err := b.c.Get(ctx, "/dags", q, &out)
	dags := make([]core.DagModel, len(out.Dags))
	for i := range out.Dags {
		dags[i] = out.Dags[i].Dag()
	}
	return dags, out.TotalEntries, err
}

// DagTasks implements backend.
func (b *restBackend) DagTasks(ctx context.Context, dagID string) ([]api.TaskResponse, error) {
	var out api.DAGDetails
	err := b.c.Get(ctx, "/dags/"+seg(dagID), nil, &out)
	return out.Tasks, err
}

// DagSetPaused implements backend.
func (b *restBackend) DagSetPaused(ctx context.Context, dagID string, paused bool) error {
	return b.c.Do(ctx, http.MethodPatch, "/dags/"+seg(dagID), nil, map[string]bool{"is_paused": paused}, nil)
}

// ImportErrorList implements backend.
func (b *restBackend) ImportErrorList(ctx context.Context, p *store.ImportErrorListParams) ([]core.ImportError, int, error) {
	var out api.ImportErrorCollection
	err := b.c.Get(ctx, "/importErrors", pageQuery(p.Page), &out)
	errs := make([]core.ImportError, len(out.ImportErrors))
	for i := range out.ImportErrors {
		errs[i] = out.ImportErrors[i].ImportError
	}
	return errs, out.TotalEntries, err
}

// DagRunTrigger implements backend.
func (b *restBackend) DagRunTrigger(ctx context.Context, p runs.TriggerParams) (*core.DagRun, error) {
	body := struct {
		DagRunID          string          `json:"dag_run_id,omitempty"`
		LogicalDate       *time.Time      `json:"logical_date,omitempty"`
		DataIntervalStart *time.Time      `json:"data_interval_start,omitempty"`
		DataIntervalEnd   *time.Time      `json:"data_interval_end,omitempty"`
		Conf              json.RawMessage `json:"conf,omitempty"`
		PartitionKey      *string         `json:"partition_key,omitempty"`
	}{p.RunID, p.LogicalDate, p.DataIntervalStart, p.DataIntervalEnd, p.Conf, p.PartitionKey}
	var run core.DagRun
	if err := b.c.Do(ctx, http.MethodPost, "/dags/"+seg(p.DagID)+"/dagRuns", nil, body, &run); err != nil {
		return nil, err
	}
	return &run, nil
}

// DagRunList implements backend.
func (b *restBackend) DagRunList(ctx context.Context, p *store.DagRunListParams) ([]core.DagRun, int, error) {
	q := pageQuery(p.Page)
	for _, s := range p.States {
		q.Add("state", string(s))
	}
	for _, t := range p.RunTypes {
		q.Add("run_type", string(t))
	}
	if p.LogicalDateGTE != nil {
		q.Set("logical_date_gte", p.LogicalDateGTE.UTC().Format(time.RFC3339Nano))
	}
	if p.LogicalDateLTE != nil {
		q.Set("logical_date_lte", p.LogicalDateLTE.UTC().Format(time.RFC3339Nano))
	}
	if p.BackfillID != 0 {
		q.Set("backfill_id", strconv.FormatInt(p.BackfillID, 10))
	}
	dagID := p.DagID
	if dagID == "" {
		dagID = api.AllDags
	}
	var out api.DAGRunCollection
	err := b.c.Get(ctx, "/dags/"+seg(dagID)+"/dagRuns", q, &out)
	runs := make([]core.DagRun, len(out.DagRuns))
	for i, r := range out.DagRuns {
		runs[i] = r.DagRun
	}
	return runs, out.TotalEntries, err
}

// PoolList implements backend.
func (b *restBackend) PoolList(ctx context.Context, p *store.PoolListParams) ([]core.Pool, int, error) {
	var out api.PoolCollection
	if err := b.c.Get(ctx, "/pools", pageQuery(p.Page), &out); err != nil {
		return nil, 0, err
	}
	pools := make([]core.Pool, len(out.Pools))
	for i, r := range out.Pools {
		pools[i] = poolOf(r)
	}
	return pools, out.TotalEntries, nil
}

func poolOf(r api.PoolResponse) core.Pool {
	p := core.Pool{Name: r.Name, Slots: r.Slots, OccupiedSlots: r.OccupiedSlots, RunningSlots: r.RunningSlots,
		QueuedSlots: r.QueuedSlots, ScheduledSlots: r.ScheduledSlots, DeferredSlots: r.DeferredSlots}
	if r.Description != nil {
		p.Description = *r.Description
	}
	return p
}

// PoolSave implements backend: PATCH changes a pool, POST creates one; an
// upsert patches and creates when there is nothing to patch.
func (b *restBackend) PoolSave(ctx context.Context, ch service.PoolChange) (*core.Pool, error) {
	var out api.PoolResponse
	var err error
	if ch.Mode != service.PoolCreate {
		body := map[string]any{}
		if ch.Slots != nil {
			body["slots"] = *ch.Slots
		}
		if ch.Description != nil {
			body["description"] = *ch.Description
		}
		err = b.c.Do(ctx, http.MethodPatch, "/pools/"+seg(ch.Name), nil, body, &out)
	}
	if ch.Mode == service.PoolCreate || (ch.Mode == service.PoolUpsert && errors.Is(err, core.ErrNotFound)) {
		body := map[string]any{"name": ch.Name}
		if ch.Slots != nil {
			body["slots"] = *ch.Slots
		}
		if ch.Description != nil {
			body["description"] = *ch.Description
		}
		err = b.c.Do(ctx, http.MethodPost, "/pools", nil, body, &out)
	}
	if err != nil {
		return nil, err
	}
	p := poolOf(out)
	return &p, nil
}

// PoolDelete implements backend.
func (b *restBackend) PoolDelete(ctx context.Context, name string) error {
	return b.c.Do(ctx, http.MethodDelete, "/pools/"+seg(name), nil, nil, nil)
}

// ConnectionList implements backend.
func (b *restBackend) ConnectionList(ctx context.Context, p *store.ConnectionListParams) ([]core.Connection, int, error) {
	var out api.ConnectionCollection
	if err := b.c.Get(ctx, "/connections", pageQuery(p.Page), &out); err != nil {
		return nil, 0, err
	}
	conns := make([]core.Connection, len(out.Connections))
	for i, c := range out.Connections {
		conns[i] = core.Connection{ID: c.ConnectionID, URI: c.URI}
	}
	return conns, out.TotalEntries, nil
}

// ConfigConnections implements backend: a deployment's configured
// connections are its workers' and are not served by the API.
func (b *restBackend) ConfigConnections() map[string]string { return nil }

// ConnectionAdd implements backend. The API creates connections only (an
// existing id is a conflict, as in Airflow's API).
func (b *restBackend) ConnectionAdd(ctx context.Context, c core.Connection) error {
	body := map[string]string{"connection_id": c.ID, "uri": c.URI}
	return b.c.Do(ctx, http.MethodPost, "/connections", nil, body, nil)
}

// ConnectionDelete implements backend.
func (b *restBackend) ConnectionDelete(ctx context.Context, id string) error {
	return b.c.Do(ctx, http.MethodDelete, "/connections/"+seg(id), nil, nil, nil)
}

// VariableList implements backend.
func (b *restBackend) VariableList(ctx context.Context, p *store.VariableListParams) ([]core.Variable, int, error) {
	var out api.VariableCollection
	if err := b.c.Get(ctx, "/variables", pageQuery(p.Page), &out); err != nil {
		return nil, 0, err
	}
	vs := make([]core.Variable, len(out.Variables))
	for i, v := range out.Variables {
		vs[i] = core.Variable{Key: v.Key, Value: v.Value, Description: v.Description, Undecryptable: v.Undecryptable}
	}
	return vs, out.TotalEntries, nil
}

// VariableGet implements backend. The API shows a secret's value as "***".
func (b *restBackend) VariableGet(ctx context.Context, key string) (*core.Variable, error) {
	var v api.VariableResponse
	if err := b.c.Get(ctx, "/variables/"+seg(key), nil, &v); err != nil {
		return nil, err
	}
	return &core.Variable{Key: v.Key, Value: v.Value, Description: v.Description}, nil
}

// VariableSet implements backend: PATCH replaces a variable, POST creates
// it when there is none.
func (b *restBackend) VariableSet(ctx context.Context, v core.Variable, keepDescription bool) error {
	value := api.VariableValue(v.Value)
	body := api.VariableBody{Key: v.Key, Value: &value}
	if !keepDescription {
		body.Description = &v.Description
	}
	err := b.c.Do(ctx, http.MethodPatch, "/variables/"+seg(v.Key), nil, body, nil)
	if errors.Is(err, core.ErrNotFound) {
		err = b.c.Do(ctx, http.MethodPost, "/variables", nil, body, nil)
	}
	return err
}

// VariableDelete implements backend.
func (b *restBackend) VariableDelete(ctx context.Context, key string) error {
	return b.c.Do(ctx, http.MethodDelete, "/variables/"+seg(key), nil, nil, nil)
}

// DagRunGet implements backend.
func (b *restBackend) DagRunGet(ctx context.Context, dagID, runID string) (*core.DagRun, error) {
	var run core.DagRun
	if err := b.c.Get(ctx, "/dags/"+seg(dagID)+"/dagRuns/"+seg(runID), nil, &run); err != nil {
		return nil, err
	}
	return &run, nil
}

// TaskInstancesOfRun implements backend: every page of the run's list.
func (b *restBackend) TaskInstancesOfRun(ctx context.Context, dagID, runID string) ([]core.TaskInstance, error) {
	var all []core.TaskInstance
	for {
		q := pageQuery(store.Page{Limit: 1000, Offset: len(all)})
		var out api.TaskInstanceCollection
		if err := b.c.Get(ctx, "/dags/"+seg(dagID)+"/dagRuns/"+seg(runID)+"/taskInstances", q, &out); err != nil {
			return nil, err
		}
		all = append(all, api.TaskInstances(out.TaskInstances)...)
		if len(out.TaskInstances) == 0 || len(all) >= out.TotalEntries {
			return all, nil
		}
	}
}

// Clear implements backend (POST /dags/{dag_id}/clearTaskInstances, every
// field explicit: the API's defaults are Airflow's dry run and only failed).
func (b *restBackend) Clear(ctx context.Context, p service.ClearParams) ([]core.TaskInstance, error) {
	body := struct {
		DagRunID          string     `json:"dag_run_id,omitempty"`
		TaskIDs           []string   `json:"task_ids,omitempty"`
		OnlyFailed        bool       `json:"only_failed"`
		DryRun            bool       `json:"dry_run"`
		KeepTaskState     bool       `json:"keep_task_state"`
		IncludeDownstream bool       `json:"include_downstream"`
		StartDate         *time.Time `json:"start_date,omitempty"`
		EndDate           *time.Time `json:"end_date,omitempty"`
	}{p.RunID, p.TaskIDs, p.OnlyFailed, p.DryRun, p.KeepTaskState, p.Downstream, p.StartDate, p.EndDate}
	var out api.ClearResult
	if err := b.c.Do(ctx, http.MethodPost, "/dags/"+seg(p.DagID)+"/clearTaskInstances", nil, body, &out); err != nil {
		return nil, err
	}
	return api.TaskInstances(out.TaskInstances), nil
}

// AssetList implements backend.
func (b *restBackend) AssetList(ctx context.Context, p *store.AssetListParams) ([]core.AssetModel, int, error) {
	q := pageQuery(p.Page)
	q.Set("only_active", strconv.FormatBool(p.Active != nil && *p.Active))
	var out api.AssetCollection
	err := b.c.Get(ctx, "/assets", q, &out)
	return out.Assets, out.TotalEntries, err
}

// UserCreate implements backend (POST /users).
func (b *restBackend) UserCreate(ctx context.Context, username, password string, role core.Role) error {
	body := map[string]string{"username": username, "password": password, "role": string(role)}
	return b.c.Do(ctx, http.MethodPost, "/users", nil, body, nil)
}

// DagWarningList implements backend.
func (b *restBackend) DagWarningList(ctx context.Context, p *store.DagWarningListParams) ([]core.DagWarning, int, error) {
	q := pageQuery(p.Page)
	if p.DagID != "" {
		q.Set("dag_id", p.DagID)
	}
	if p.WarningType != "" {
		q.Set("warning_type", p.WarningType)
	}
	var out api.DagWarningCollection
	err := b.c.Get(ctx, "/dagWarnings", q, &out)
	return out.DagWarnings, out.TotalEntries, err
}

// MasksSecrets implements backend: the API shows a secret's value as ***.
func (b *restBackend) MasksSecrets() bool { return true }
