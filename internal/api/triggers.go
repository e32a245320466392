package api

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/secrets"
	"github.com/weirflow/weir/internal/store"
)

// TriggerCollection is a page of triggers.
type TriggerCollection struct {
	Triggers     []core.Trigger `json:"triggers"`
	TotalEntries int            `json:"total_entries"`
}

type listTriggersInput struct {
	TriggererID string `query:"triggerer_id" doc:"only the triggers this triggerer (its job id) runs"`
	Page
}

// registerTriggers serves GET /triggers: the triggers deferred tries wait
// on, with the triggerer running each (docs/triggers.md).
func (s *server) registerTriggers() {
	register(s, core.RoleViewer, huma.Operation{
		OperationID: "list_triggers", Method: http.MethodGet, Path: Prefix + "/triggers", Tags: []string{"Trigger"},
		Summary: "List triggers",
		Description: listDoc("Lists the triggers deferred task instances wait on, each with its type, its kwargs "+
			"(secrets masked), when it was created and the triggerer running it (empty while unassigned).", store.TriggerOrder),
		Errors: []int{http.StatusBadRequest},
	}, s.listTriggers)
}

func (s *server) listTriggers(ctx context.Context, in *listTriggersInput) (*struct{ Body TriggerCollection }, error) {
	p := &store.TriggerListParams{TriggererID: in.TriggererID, Page: in.store()}
	list, total, err := listOf(ctx, s, p, s.st.TriggerList, s.st.TriggerCount)
	if err != nil {
		return nil, err
	}
	for i := range list {
		list[i].Kwargs = secrets.MaskJSON(list[i].Kwargs)
	}
	return &struct{ Body TriggerCollection }{TriggerCollection{Triggers: list, TotalEntries: total}}, nil
}

// withTriggers sets the trigger (kwargs masked) of each deferred try.
func (s *server) withTriggers(ctx context.Context, tis []core.TaskInstance) {
	WithTriggers(ctx, s.st, tis)
}

// TriggerGetter reads a trigger row (store.Store has it).
type TriggerGetter interface {
	TriggerGet(ctx context.Context, id int64) (*core.Trigger, error)
}

// WithTriggers fills the Trigger of each deferred instance, its kwargs'
// secrets masked, as the API shows task instances (the CLI's local
// transport shows the same).
func WithTriggers(ctx context.Context, st TriggerGetter, tis []core.TaskInstance) {
	for i := range tis {
		if tis[i].TriggerID == nil {
			continue
		}
		tr, err := st.TriggerGet(ctx, *tis[i].TriggerID)
		if err != nil {
			continue // resumed meanwhile: the try shows its new state next time
		}
		tr.Kwargs = secrets.MaskJSON(tr.Kwargs)
		tis[i].Trigger = tr
	}
}
