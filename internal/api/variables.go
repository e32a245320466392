package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/secrets"
	"github.com/weirflow/weir/internal/service"
	"github.com/weirflow/weir/internal/store"
)

// VariableResponse is a variable as Airflow's REST API shows it: the value
// of a key that names a secret (password, token, api_key, ...) is "***".
type VariableResponse struct {
	Key         string `json:"key"`
	Value       string `json:"value" doc:"\"***\" when the key names a secret"`
	Description string `json:"description"`
	IsEncrypted bool   `json:"is_encrypted" doc:"always true: values are encrypted at rest"`
	// Undecryptable is set on a listed variable whose value this
	// api-server cannot decrypt (Weir's addition).
	Undecryptable string `json:"undecryptable,omitempty" doc:"why the stored value cannot be decrypted by this api-server (a key its key file lacks, or tampering); value then says so"`
}

// VariableCollection is a page of variables.
type VariableCollection struct {
	Variables    []VariableResponse `json:"variables"`
	TotalEntries int                `json:"total_entries"`
}

// VariableBody creates or updates a variable.
type VariableBody struct {
	Key         string         `json:"key" doc:"letters, digits, '_', '-' and '.'; at most 250"`
	Value       *VariableValue `json:"value" doc:"a string, or any other JSON value but null (kept as its JSON text); at most 64 KiB"`
	Description *string        `json:"description,omitempty"`
}

// VariableValue is a variable's value as a body gives it: a string as it
// is, any other JSON value (an object, a list, a number) as its compact
// JSON text, as Airflow keeps a non-string value.
type VariableValue string

// UnmarshalJSON reads a string, or another JSON value as its text.
func (v *VariableValue) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*v = VariableValue(s)
		return nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return err
	}
	*v = VariableValue(buf.String())
	return nil
}

// text is the value to store; null (nil) is refused.
func (v *VariableValue) text() (string, error) {
	if v == nil {
		return "", invalid("value must not be null: give a string or another JSON value, or delete the variable")
	}
	return string(*v), nil
}

// Schema documents the value as any JSON but null.
func (VariableValue) Schema(huma.Registry) *huma.Schema {
	return &huma.Schema{Description: "a string, or any other JSON value but null (kept as its JSON text)"}
}

type variableKeyInput struct {
	Key string `path:"variable_key" doc:"variable key"`
}

type postVariableInput struct {
	Body VariableBody
}

// VariablePatch updates a variable: its value, and its description when given.
type VariablePatch struct {
	Key         string         `json:"key,omitempty" doc:"the path's key, if given"`
	Value       *VariableValue `json:"value" doc:"a string, or any other JSON value but null (kept as its JSON text); at most 64 KiB"`
	Description *string        `json:"description,omitempty" doc:"kept when absent"`
}

type patchVariableInput struct {
	Key        string   `path:"variable_key" doc:"variable key"`
	UpdateMask []string `query:"update_mask" doc:"only these fields (value, description), as Airflow's update_mask; none: the value, and the description when given"`
	Body       VariablePatch
}

type listVariablesInput struct {
	Page
	Pattern string `query:"variable_key_pattern" doc:"only variables whose key contains this, ignoring case (% and _ are taken literally)"`
}

func (s *server) registerVariables() {
	tags := []string{"Variable"}
	base := Prefix + "/variables"
	register(s, core.RoleOp, huma.Operation{
		OperationID: "get_variables", Method: http.MethodGet, Path: base, Tags: tags, Summary: "List variables",
		Description: listDoc("Lists variables, secret values masked.", store.VariableOrder), Errors: []int{http.StatusBadRequest},
	}, s.listVariables)
	register(s, core.RoleOp, huma.Operation{
		OperationID: "get_variable", Method: http.MethodGet, Path: base + "/{variable_key}", Tags: tags,
		Summary: "Get a variable", Errors: []int{http.StatusNotFound},
	}, s.getVariable)
	register(s, core.RoleOp, huma.Operation{
		OperationID: "post_variable", Method: http.MethodPost, Path: base, Tags: tags, Summary: "Create a variable",
		DefaultStatus: http.StatusCreated, Errors: []int{http.StatusBadRequest, http.StatusConflict},
	}, s.postVariable)
	register(s, core.RoleOp, huma.Operation{
		OperationID: "patch_variable", Method: http.MethodPatch, Path: base + "/{variable_key}", Tags: tags,
		Summary: "Update a variable", Errors: []int{http.StatusBadRequest, http.StatusNotFound},
	}, s.patchVariable)
	register(s, core.RoleOp, huma.Operation{
		OperationID: "delete_variable", Method: http.MethodDelete, Path: base + "/{variable_key}", Tags: tags,
		Summary: "Delete a variable", DefaultStatus: http.StatusNoContent, Errors: []int{http.StatusNotFound},
	}, s.deleteVariable)
	register(s, core.RoleOp, huma.Operation{
		OperationID: "bulk_variables", Method: http.MethodPatch, Path: base, Tags: tags,
		Summary: "Create, update and delete variables", Description: bulkDoc("variables"), Errors: []int{http.StatusBadRequest},
	}, func(ctx context.Context, in *struct{ Body BulkBody }) (*struct{ Body BulkResponse }, error) {
		return bulk(ctx, s, s.variableBulk(), &in.Body)
	})
}

// variableBulk is a bulk PATCH's view of variables.
func (s *server) variableBulk() bulkResource[VariableBody] {
	save := func(ctx context.Context, b VariableBody, w service.VariableWrite) error {
		value, err := b.Value.text()
		if err != nil {
			return err
		}
		v := core.Variable{Key: b.Key, Value: value}
		if b.Description != nil {
			v.Description = *b.Description
		}
		w.KeepDescription = b.Description == nil && w.OnlyExisting
		return s.svc.SaveVariable(ctx, actor(ctx), v, w)
	}
	return bulkResource[VariableBody]{
		plural: "variables",
		key:    func(b VariableBody) string { return b.Key },
		exists: func(ctx context.Context, key string) (bool, error) {
			_, err := s.st.VariableGet(ctx, key)
			return found(err)
		},
		create: func(ctx context.Context, b VariableBody, overwrite bool) error {
			return save(ctx, b, service.VariableWrite{OnlyNew: !overwrite})
		},
		update: func(ctx context.Context, b VariableBody) error {
			return save(ctx, b, service.VariableWrite{OnlyExisting: true})
		},
		remove: func(ctx context.Context, key string) error { return s.svc.DeleteVariable(ctx, actor(ctx), key) },
	}
}

// found turns a read's error into whether the thing exists: not found is
// false; a row that does not decrypt here exists.
func found(err error) (bool, error) {
	switch {
	case err == nil, errors.Is(err, secrets.ErrUndecryptable):
		return true, nil
	case errors.Is(err, core.ErrNotFound):
		return false, nil
	default:
		return false, err
	}
}

func (s *server) listVariables(ctx context.Context, in *listVariablesInput) (*struct{ Body VariableCollection }, error) {
	vars, total, err := listOf(ctx, s, &store.VariableListParams{Search: in.Pattern, Page: in.store()}, s.st.VariableList, s.st.VariableCount)
	if err != nil {
		return nil, err
	}
	out := make([]VariableResponse, len(vars))
	for i, v := range vars {
		out[i] = variableResponse(v)
	}
	return &struct{ Body VariableCollection }{VariableCollection{Variables: out, TotalEntries: total}}, nil
}

func (s *server) getVariable(ctx context.Context, in *variableKeyInput) (*struct{ Body VariableResponse }, error) {
	v, err := s.st.VariableGet(ctx, in.Key)
	if err != nil {
		return nil, s.problem(ctx, fmt.Errorf("variable %q: %w", in.Key, err))
	}
	return &struct{ Body VariableResponse }{variableResponse(*v)}, nil
}

func (s *server) postVariable(ctx context.Context, in *postVariableInput) (*struct{ Body VariableResponse }, error) {
	value, err := in.Body.Value.text()
	if err != nil {
		return nil, err
	}
	v := core.Variable{Key: in.Body.Key, Value: value}
	if in.Body.Description != nil {
		v.Description = *in.Body.Description
	}
	if err := s.svc.SaveVariable(ctx, actor(ctx), v, service.VariableWrite{OnlyNew: true}); err != nil {
		return nil, s.problem(ctx, err)
	}
	return &struct{ Body VariableResponse }{variableResponse(v)}, nil
}

func (s *server) patchVariable(ctx context.Context, in *patchVariableInput) (*struct{ Body VariableResponse }, error) {
	if in.Body.Key != "" && in.Body.Key != in.Key {
		return nil, invalid(fmt.Sprintf("body key %q does not match the path's %q: a variable cannot be renamed", in.Body.Key, in.Key))
	}
	value, err := in.Body.Value.text()
	if err != nil {
		return nil, err
	}
	v := core.Variable{Key: in.Key, Value: value}
	if in.Body.Description != nil {
		v.Description = *in.Body.Description
	}
	w := service.VariableWrite{OnlyExisting: true, KeepDescription: in.Body.Description == nil}
	if len(in.UpdateMask) > 0 {
		for _, f := range in.UpdateMask {
			if f != "value" && f != "description" {
				return nil, invalid(fmt.Sprintf("update_mask names %q; a variable's fields to update are value and description", f))
			}
		}
		w.KeepValue, w.KeepDescription = !slices.Contains(in.UpdateMask, "value"), !slices.Contains(in.UpdateMask, "description")
	}
	if err := s.svc.SaveVariable(ctx, actor(ctx), v, w); err != nil {
		return nil, s.problem(ctx, err)
	}
	if w.KeepDescription || w.KeepValue {
		cur, err := s.st.VariableGet(ctx, in.Key)
		if err != nil {
			return nil, s.problem(ctx, err)
		}
		v = *cur
	}
	return &struct{ Body VariableResponse }{variableResponse(v)}, nil
}

func (s *server) deleteVariable(ctx context.Context, in *variableKeyInput) (*struct{}, error) {
	if err := s.svc.DeleteVariable(ctx, actor(ctx), in.Key); err != nil {
		return nil, s.problem(ctx, err)
	}
	return nil, nil
}

// variableResponse shows v with a secret's value masked (ShownValue).
func variableResponse(v core.Variable) VariableResponse {
	return VariableResponse{Key: v.Key, Value: ShownValue(v), Description: v.Description, IsEncrypted: true,
		Undecryptable: v.Undecryptable}
}

// ShownValue is a variable's value as every surface shows it: "***" for a
// key that names a secret, a JSON value with the secrets in it masked
// (secrets.MaskJSON), or, for a row that does not decrypt here, why.
func ShownValue(v core.Variable) string {
	switch {
	case v.Undecryptable != "":
		return undecryptableShown(v.Undecryptable, "set")
	case secrets.SensitiveName(v.Key):
		return redacted
	}
	// A JSON value's secrets, at any depth ({"db": {"password": ...}}, a
	// URL's password), as Airflow masks a JSON variable's keys.
	if t := strings.TrimSpace(v.Value); (strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[")) && json.Valid([]byte(t)) {
		if masked := secrets.MaskJSON(json.RawMessage(t)); strings.Count(string(masked), redacted) > strings.Count(t, redacted) {
			return string(masked)
		}
	}
	return v.Value
}
