package emission

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
)

func ptr(s string) *string { return &s }

// TestCheck: what a request may carry, and the error that names the field
// at fault otherwise.
func TestCheck(t *testing.T) {
	t.Parallel()
	orders := core.AssetRef{Name: "orders"}
	big := `{"blob": "` + strings.Repeat("x", 100) + `"}`
	tests := []struct {
		name      string
		req       Request
		wantErr   error
		wantIn    string // in the error
		wantExtra string
		wantDate  string
	}{
		{name: "bare", req: Request{Asset: orders}, wantExtra: `{}`},
		{name: "by uri with everything", req: Request{Asset: core.AssetRef{URI: "s3://o"}, PartitionKey: ptr("batch-1"),
			PartitionDate: "2026-03-01T00:00:00+01:00", Extra: json.RawMessage(`{ "rows": 3 }`), IdempotencyKey: ptr("k")},
			wantExtra: `{"rows":3}`, wantDate: "2026-02-28T23:00:00Z"},
		{name: "secrets masked", req: Request{Asset: orders, Extra: json.RawMessage(`{"api_key": "s3cr3t", "db": "postgres://u:pw@h/d", "n": 1}`)},
			wantExtra: `{"api_key":"***","db":"postgres://u:***@h/d","n":1}`},
		{name: "date without key", req: Request{Asset: orders, PartitionDate: "2026-03-01T00:00:00Z"},
			wantErr: core.ErrInvalid, wantIn: `needs a "partition_key"`},
		{name: "date without zone", req: Request{Asset: orders, PartitionKey: ptr("p"), PartitionDate: "2026-03-01T00:00:00"},
			wantErr: core.ErrInvalid, wantIn: "with a zone offset"},
		{name: "plain date", req: Request{Asset: orders, PartitionKey: ptr("p"), PartitionDate: "2026-03-01"},
			wantErr: core.ErrInvalid, wantIn: "RFC 3339"},
		{name: "empty partition key", req: Request{Asset: orders, PartitionKey: ptr("")},
			wantErr: core.ErrInvalid, wantIn: `"partition_key" must not be empty`},
		{name: "long idempotency key", req: Request{Asset: orders, IdempotencyKey: ptr(strings.Repeat("k", MaxKeyLen+1))},
			wantErr: core.ErrInvalid, wantIn: `"idempotency_key" is 257 bytes`},
		{name: "empty idempotency key", req: Request{Asset: orders, IdempotencyKey: ptr("")},
			wantErr: core.ErrInvalid, wantIn: `"idempotency_key" must not be empty`},
		{name: "control character", req: Request{Asset: orders, IdempotencyKey: ptr("a\nb")},
			wantErr: core.ErrInvalid, wantIn: "control character"},
		{name: "extra with NaN", req: Request{Asset: orders, Extra: json.RawMessage(`{"v": NaN}`)},
			wantErr: core.ErrInvalid, wantIn: `"extra" is not JSON (invalid character 'N'`},
		{name: "extra with a number no float holds", req: Request{Asset: orders, Extra: json.RawMessage(`{"v": 1e999}`)},
			wantErr: core.ErrInvalid, wantIn: `"extra" holds a value JSON decoders cannot read (json: cannot unmarshal number 1e999`},
		{name: "extra not an object", req: Request{Asset: orders, Extra: json.RawMessage(`[1]`)},
			wantErr: core.ErrInvalid, wantIn: `"extra" must be a JSON object`},
		{name: "extra too large", req: Request{Asset: orders, Extra: json.RawMessage(big)},
			wantErr: core.ErrTooLarge, wantIn: "more than the 64 allowed"},
		{name: "no asset", req: Request{}, wantErr: core.ErrInvalid, wantIn: "exactly one of name or uri"},
		{name: "name and uri", req: Request{Asset: core.AssetRef{Name: "a", URI: "b"}}, wantErr: core.ErrInvalid},
		{name: "alias as the asset", req: Request{Asset: core.AssetRef{Alias: "a"}}, wantErr: core.ErrInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := Check(tc.req, 64)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) || !strings.Contains(err.Error(), tc.wantIn) {
					t.Fatalf("err = %v, want %v containing %q", err, tc.wantErr, tc.wantIn)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got.Extra) != tc.wantExtra {
				t.Errorf("extra = %s, want %s", got.Extra, tc.wantExtra)
			}
			if tc.wantDate == "" && got.Date != nil || tc.wantDate != "" && (got.Date == nil || got.Date.UTC().Format(time.RFC3339) != tc.wantDate) {
				t.Errorf("date = %v, want %q", got.Date, tc.wantDate)
			}
		})
	}
}

// TestTarget: a task emits for its concrete outlets and through its alias
// outlets; anything else is forbidden, naming what the task declares.
func TestTarget(t *testing.T) {
	t.Parallel()
	dag := &core.DAG{DagID: "d", Assets: []core.Asset{{Name: "orders", URI: "s3://o"}, {Name: "other", URI: "s3://x"}},
		Tasks: []core.Task{
			{TaskID: "load", Outlets: []core.AssetRef{{URI: "s3://o"}, {Alias: "exports"}}, Inlets: []core.AssetRef{{Name: "other"}}},
			{TaskID: "none"},
		}}
	load, none := &dag.Tasks[0], &dag.Tasks[1]
	tests := []struct {
		name    string
		task    *core.Task
		req     Request
		want    string // asset name; "" = through an alias
		wantErr string
	}{
		{"outlet by name", load, Request{Asset: core.AssetRef{Name: "orders"}}, "orders", ""},
		{"outlet by uri", load, Request{Asset: core.AssetRef{URI: "s3://o"}}, "orders", ""},
		{"through its alias", load, Request{Asset: core.AssetRef{Name: "anything"}, Alias: "exports"}, "", ""},
		{"an inlet", load, Request{Asset: core.AssetRef{Name: "other"}}, "",
			`may not emit events for asset other: it is not one of the task's outlets (its outlets: assets "orders"; aliases "exports")`},
		{"unknown asset", load, Request{Asset: core.AssetRef{Name: "nope"}}, "", "asset nope"},
		{"undeclared alias", load, Request{Asset: core.AssetRef{Name: "orders"}, Alias: "dyn"}, "", `through alias "dyn"`},
		{"task without outlets", none, Request{Asset: core.AssetRef{Name: "orders"}}, "", "it declares no outlets"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := Target(dag, tc.task, tc.req)
			if tc.wantErr != "" {
				if !errors.Is(err, core.ErrForbidden) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want forbidden containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if name := func() string {
				if got == nil {
					return ""
				}
				return got.Name
			}(); name != tc.want {
				t.Errorf("target = %q, want %q", name, tc.want)
			}
		})
	}
}
