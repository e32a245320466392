package api

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/service"
	"github.com/weirflow/weir/internal/store"
)

// PoolResponse is a pool with its current occupancy.
type PoolResponse struct {
	Name            string  `json:"name"`
	Slots           int     `json:"slots"`
	Description     *string `json:"description" doc:"null for none, as Airflow's"`
	IncludeDeferred bool    `json:"include_deferred" doc:"always false: a deferred try holds no slot"`
	OccupiedSlots   int     `json:"occupied_slots" doc:"slots of queued and running task instances"`
	RunningSlots    int     `json:"running_slots"`
	QueuedSlots     int     `json:"queued_slots"`
	ScheduledSlots  int     `json:"scheduled_slots"`
	DeferredSlots   int     `json:"deferred_slots"`
	OpenSlots       int     `json:"open_slots"`
}

// PoolCollection is a page of pools.
type PoolCollection struct {
	Pools        []PoolResponse `json:"pools"`
	TotalEntries int            `json:"total_entries"`
}

// PoolNameParam names a pool in the path.
type PoolNameParam struct {
	Name string `path:"pool_name" doc:"pool name"`
}

type postPoolInput struct {
	Body struct {
		Name        string `json:"name" minLength:"1" maxLength:"256"`
		Slots       int    `json:"slots" minimum:"0"`
		Description string `json:"description,omitempty"`
	}
}

type patchPoolInput struct {
	PoolNameParam
	UpdateMask []string `query:"update_mask" doc:"only these fields (slots, description; name and include_deferred as below), as Airflow's update_mask; none: the fields the body gives"`
	Body       struct {
		Name            *string `json:"name,omitempty" doc:"the path's pool_name, when given: a pool is not renamed"`
		Slots           *int    `json:"slots,omitempty" minimum:"0"`
		Description     *string `json:"description,omitempty"`
		IncludeDeferred *bool   `json:"include_deferred,omitempty" doc:"false only: a deferred try holds no slot in Weir"`
	}
}

// poolPatchFields are the fields a pool's update_mask may name.
var poolPatchFields = []string{"name", "slots", "description", "include_deferred"}

type listPoolsInput struct {
	Page
	Pattern string `query:"pool_name_pattern" doc:"only pools whose name contains this, ignoring case (% and _ are taken literally)"`
}

func (s *server) registerPools() {
	tags := []string{"Pool"}
	base := Prefix + "/pools"
	register(s, core.RoleViewer, huma.Operation{
		OperationID: "get_pools", Method: http.MethodGet, Path: base, Tags: tags, Summary: "List pools",
		Description: listDoc("Lists pools with their occupancy.", store.PoolOrder), Errors: []int{http.StatusBadRequest},
	}, s.listPools)
	register(s, core.RoleViewer, huma.Operation{
		OperationID: "get_pool", Method: http.MethodGet, Path: base + "/{pool_name}", Tags: tags,
		Summary: "Get a pool", Errors: []int{http.StatusNotFound},
	}, s.getPool)
	register(s, core.RoleAdmin, huma.Operation{
		OperationID: "post_pool", Method: http.MethodPost, Path: base, Tags: tags, Summary: "Create a pool",
		DefaultStatus: http.StatusCreated, Errors: []int{http.StatusConflict},
	}, s.postPool)
	register(s, core.RoleAdmin, huma.Operation{
		OperationID: "patch_pool", Method: http.MethodPatch, Path: base + "/{pool_name}", Tags: tags,
		Summary: "Change a pool's slots or description", Errors: []int{http.StatusNotFound},
	}, s.patchPool)
	register(s, core.RoleAdmin, huma.Operation{
		OperationID: "bulk_pools", Method: http.MethodPatch, Path: base, Tags: tags,
		Summary: "Create, update and delete pools", Description: bulkDoc("pools"), Errors: []int{http.StatusBadRequest},
	}, func(ctx context.Context, in *struct{ Body BulkBody }) (*struct{ Body BulkResponse }, error) {
		return bulk(ctx, s, s.poolBulk(), &in.Body)
	})
	register(s, core.RoleAdmin, huma.Operation{
		OperationID: "delete_pool", Method: http.MethodDelete, Path: base + "/{pool_name}", Tags: tags,
		Summary: "Delete a pool", DefaultStatus: http.StatusNoContent,
		Errors: []int{http.StatusBadRequest, http.StatusNotFound},
	}, s.deletePool)
}

func (s *server) listPools(ctx context.Context, in *listPoolsInput) (*struct{ Body PoolCollection }, error) {
	pools, total, err := listOf(ctx, s, &store.PoolListParams{WithOccupancy: true, Search: in.Pattern, Page: in.store()}, s.st.PoolList, s.st.PoolCount)
	if err != nil {
		return nil, err
	}
	out := make([]PoolResponse, len(pools))
	for i, p := range pools {
		out[i] = poolResponse(p)
	}
	return &struct{ Body PoolCollection }{PoolCollection{Pools: out, TotalEntries: total}}, nil
}

func (s *server) getPool(ctx context.Context, in *PoolNameParam) (*struct{ Body PoolResponse }, error) {
	p, err := s.pool(ctx, in.Name)
	if err != nil {
		return nil, s.problem(ctx, err)
	}
	return &struct{ Body PoolResponse }{*p}, nil
}

func (s *server) postPool(ctx context.Context, in *postPoolInput) (*struct{ Body PoolResponse }, error) {
	return s.savePool(ctx, service.PoolChange{Name: in.Body.Name, Slots: &in.Body.Slots, Description: &in.Body.Description,
		Mode: service.PoolCreate})
}

func (s *server) patchPool(ctx context.Context, in *patchPoolInput) (*struct{ Body PoolResponse }, error) {
	b := &in.Body
	for _, f := range in.UpdateMask {
		if !slices.Contains(poolPatchFields, f) {
			return nil, invalid(fmt.Sprintf("update_mask names %q; a pool's fields to update are %s", f, strings.Join(poolPatchFields, ", ")))
		}
	}
	masked := func(f string) bool { return len(in.UpdateMask) == 0 || slices.Contains(in.UpdateMask, f) }
	if b.Name != nil && *b.Name != in.Name && masked("name") {
		return nil, invalid(fmt.Sprintf("name %q in the body is not the path's %q: a pool is not renamed (create the new one, then delete this one)", *b.Name, in.Name))
	}
	if b.IncludeDeferred != nil && *b.IncludeDeferred && masked("include_deferred") {
		return nil, invalid("include_deferred: a deferred try holds no slot in Weir; only false is accepted")
	}
	ch := service.PoolChange{Name: in.Name, Mode: service.PoolUpdate}
	if masked("slots") {
		ch.Slots = b.Slots
	}
	if masked("description") {
		ch.Description = b.Description
	}
	return s.savePool(ctx, ch)
}

// PoolBody is a pool as a bulk PATCH creates or updates it.
type PoolBody struct {
	Name            string  `json:"name" minLength:"1" maxLength:"256"`
	Slots           *int    `json:"slots,omitempty" minimum:"0"`
	Description     *string `json:"description,omitempty"`
	IncludeDeferred bool    `json:"include_deferred,omitempty" doc:"false only: a deferred try holds no slot in Weir"`
}

// poolBulk is a bulk PATCH's view of pools.
func (s *server) poolBulk() bulkResource[PoolBody] {
	save := func(ctx context.Context, b PoolBody, mode service.PoolMode) error {
		if b.IncludeDeferred {
			return invalid(fmt.Sprintf("pool %q: include_deferred: a deferred try holds no slot in Weir; only false is accepted", b.Name))
		}
		_, err := s.svc.SavePool(ctx, actor(ctx), service.PoolChange{Name: b.Name, Slots: b.Slots, Description: b.Description, Mode: mode})
		return err
	}
	return bulkResource[PoolBody]{
		plural: "pools",
		key:    func(b PoolBody) string { return b.Name },
		exists: func(ctx context.Context, name string) (bool, error) {
			pools, err := s.st.PoolList(ctx, &store.PoolListParams{Names: []string{name}})
			return len(pools) > 0, err
		},
		create: func(ctx context.Context, b PoolBody, overwrite bool) error {
			return save(ctx, b, map[bool]service.PoolMode{false: service.PoolCreate, true: service.PoolUpsert}[overwrite])
		},
		update: func(ctx context.Context, b PoolBody) error { return save(ctx, b, service.PoolUpdate) },
		remove: func(ctx context.Context, name string) error { return s.svc.DeletePool(ctx, actor(ctx), name) },
	}
}

// savePool creates or changes a pool and returns it with its occupancy.
func (s *server) savePool(ctx context.Context, ch service.PoolChange) (*struct{ Body PoolResponse }, error) {
	if _, err := s.svc.SavePool(ctx, actor(ctx), ch); err != nil {
		return nil, s.problem(ctx, err)
	}
	saved, err := s.pool(ctx, ch.Name)
	if err != nil {
		return nil, s.problem(ctx, err)
	}
	return &struct{ Body PoolResponse }{*saved}, nil
}

func (s *server) deletePool(ctx context.Context, in *PoolNameParam) (*struct{}, error) {
	if err := s.svc.DeletePool(ctx, actor(ctx), in.Name); err != nil {
		return nil, s.problem(ctx, err)
	}
	return nil, nil
}

// poolResponse describes a pool read WithOccupancy.
func poolResponse(p core.Pool) PoolResponse {
	r := PoolResponse{Name: p.Name, Slots: p.Slots, OccupiedSlots: p.OccupiedSlots, RunningSlots: p.RunningSlots,
		QueuedSlots: p.QueuedSlots, ScheduledSlots: p.ScheduledSlots, DeferredSlots: p.DeferredSlots, OpenSlots: max(0, p.Slots-p.OccupiedSlots)}
	if p.Description != "" {
		r.Description = &p.Description
	}
	return r
}

// pool finds one pool with its occupancy; a missing one is a not-found
// error naming it.
func (s *server) pool(ctx context.Context, name string) (*PoolResponse, error) {
	pools, err := s.st.PoolList(ctx, &store.PoolListParams{Names: []string{name}, WithOccupancy: true})
	if err != nil {
		return nil, fmt.Errorf("get pool %q: %w", name, err)
	}
	if len(pools) == 0 {
		return nil, fmt.Errorf("pool %q: %w", name, core.ErrNotFound)
	}
	p := poolResponse(pools[0])
	return &p, nil
}
