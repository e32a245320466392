package api

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/danielgtaylor/huma/v2"
)

// BulkBody is Airflow 3's body of a bulk PATCH (of variables, pools,
// connections): actions done in order, each on its entities.
type BulkBody struct {
	Actions []BulkAction `json:"actions" minItems:"1"`
}

// BulkAction is one action of a bulk PATCH.
type BulkAction struct {
	Action string `json:"action" enum:"create,update,delete"`
	// Entities are the resources to create or update, or, to delete,
	// their keys (strings).
	Entities json.RawMessage `json:"entities" doc:"the resources to create or update; for delete, their keys"`
	// ActionOnExistence says what a create does with a key that exists:
	// fail (the default: the whole action fails, nothing of it is
	// created), skip it, or overwrite it.
	ActionOnExistence string `json:"action_on_existence,omitempty" enum:"fail,skip,overwrite"`
	// ActionOnNonExistence says what an update or delete does with a key
	// that does not exist: fail (the default, as above) or skip it.
	ActionOnNonExistence string `json:"action_on_non_existence,omitempty" enum:"fail,skip"`
}

// BulkActionResponse is what became of one kind of action: the keys done,
// and the errors.
type BulkActionResponse struct {
	Success []string    `json:"success"`
	Errors  []BulkError `json:"errors"`
}

// BulkError is an error of a bulk action, with the status a request of
// its own would have had.
type BulkError struct {
	Error      string `json:"error"`
	StatusCode int    `json:"status_code"`
}

// BulkResponse is the answer to a bulk PATCH: per kind of action, null
// when the body had none.
type BulkResponse struct {
	Create *BulkActionResponse `json:"create"`
	Update *BulkActionResponse `json:"update"`
	Delete *BulkActionResponse `json:"delete"`
}

// bulkResource is what a bulk PATCH needs of a kind of resource (E is its
// create and update body): its plural, each entity's key, whether a key
// exists, and the changes, each audited as its own request is.
type bulkResource[E any] struct {
	plural string
	key    func(E) string
	exists func(ctx context.Context, key string) (bool, error)
	create func(ctx context.Context, e E, overwrite bool) error
	update func(ctx context.Context, e E) error
	remove func(ctx context.Context, key string) error
}

// bulkDoc describes a bulk PATCH of plural.
func bulkDoc(plural string) string {
	return "Airflow's bulk operation: `{\"actions\": [{\"action\": \"create\" | \"update\" | \"delete\", \"entities\": [...], " +
		"\"action_on_existence\": \"fail\" | \"skip\" | \"overwrite\", \"action_on_non_existence\": \"fail\" | \"skip\"}]}`, the actions " +
		"in order; a delete's entities are the " + plural + "' keys. Under fail (the default) a key that exists (create) or does not " +
		"(update, delete) fails its whole action, naming the keys, and nothing of that action is done. Answers, per kind of action, " +
		"the keys done and the errors with the status each would have had alone. Each change is audited as its own request."
}

// bulk does body's actions on r's resources, in order, once every one of
// them reads (a body that does not is refused whole, nothing done).
func bulk[E any](ctx context.Context, s *server, r bulkResource[E], body *BulkBody) (*struct{ Body BulkResponse }, error) {
	type parsed struct {
		BulkAction
		entities []E
		keys     []string
	}
	actions := make([]parsed, len(body.Actions))
	for i, a := range body.Actions {
		p := parsed{BulkAction: a}
		if a.Action == "delete" {
			if err := json.Unmarshal(a.Entities, &p.keys); err != nil {
				return nil, invalid(fmt.Sprintf("actions[%d]: a delete's entities are the %s' keys, strings: %v", i, r.plural, err))
			}
		} else {
			if err := json.Unmarshal(a.Entities, &p.entities); err != nil {
				return nil, invalid(fmt.Sprintf("actions[%d]: entities are not %s: %v", i, r.plural, err))
			}
			for _, e := range p.entities {
				p.keys = append(p.keys, r.key(e))
			}
		}
		actions[i] = p
	}
	var out BulkResponse
	for _, a := range actions {
		res := map[string]**BulkActionResponse{"create": &out.Create, "update": &out.Update, "delete": &out.Delete}[a.Action]
		if *res == nil {
			*res = &BulkActionResponse{Success: []string{}, Errors: []BulkError{}}
		}
		bulkAction(ctx, s, r, a.BulkAction, a.entities, a.keys, *res)
	}
	return &struct{ Body BulkResponse }{out}, nil
}

// bulkAction does one action on entities (keys theirs, or a delete's)
// into res.
func bulkAction[E any](ctx context.Context, s *server, r bulkResource[E], a BulkAction, entities []E, keys []string, res *BulkActionResponse) {
	fail := func(err error) {
		var se huma.StatusError
		if errors.As(err, &se) {
			res.Errors = append(res.Errors, BulkError{Error: se.Error(), StatusCode: se.GetStatus()})
			return
		}
		status, detail := s.publicDetail(ctx, err)
		res.Errors = append(res.Errors, BulkError{Error: detail, StatusCode: status})
	}
	// The keys that exist decide a fail, or what a skip leaves out.
	present := map[string]bool{}
	var wrong []string // those a create finds, or an update or delete misses
	for _, k := range keys {
		ok, err := r.exists(ctx, k)
		if err != nil {
			fail(err)
			return
		}
		present[k] = ok
		if ok == (a.Action == "create") {
			wrong = append(wrong, k)
		}
	}
	onExist, onMissing := cmp.Or(a.ActionOnExistence, "fail"), cmp.Or(a.ActionOnNonExistence, "fail")
	switch {
	case len(wrong) == 0:
	case a.Action == "create" && onExist == "fail":
		res.Errors = append(res.Errors, BulkError{StatusCode: http.StatusConflict,
			Error: fmt.Sprintf("the %s with these keys already exist: %s; nothing of this create was done", r.plural, strings.Join(wrong, ", "))})
		return
	case a.Action != "create" && onMissing == "fail":
		res.Errors = append(res.Errors, BulkError{StatusCode: http.StatusNotFound,
			Error: fmt.Sprintf("the %s with these keys were not found: %s; nothing of this %s was done", r.plural, strings.Join(wrong, ", "), a.Action)})
		return
	}
	for i, k := range keys {
		if slices.Contains(wrong, k) && (a.Action != "create" || onExist == "skip") {
			continue
		}
		var err error
		switch a.Action {
		case "create":
			err = r.create(ctx, entities[i], present[k])
		case "update":
			err = r.update(ctx, entities[i])
		default:
			err = r.remove(ctx, k)
		}
		if err != nil {
			fail(err)
			continue
		}
		res.Success = append(res.Success, k)
	}
}
