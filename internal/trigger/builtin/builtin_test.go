package builtin_test

import (
	"encoding/json"
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/trigger"
	"github.com/weirflow/weir/internal/trigger/builtin"
)

// TestReferenceDocumentsEveryType: docs/triggers.md has a section for
// every built-in type a deferral can use, and every YAML example in it
// holds kwargs its type accepts (the sensor's poke_interval is a trigger
// kwarg).
func TestReferenceDocumentsEveryType(t *testing.T) {
	t.Parallel()
	reg := builtin.Registry()
	examples := documented(t, "triggers.md", "Trigger reference", trigger.UseDeferral)
	for _, ex := range examples {
		var tasks []struct {
			Trigger      map[string]any `yaml:"trigger"`
			PokeInterval string         `yaml:"poke_interval"`
		}
		if err := yaml.Unmarshal([]byte(ex), &tasks); err != nil || len(tasks) != 1 {
			t.Errorf("example does not parse as one task (%v):\n%s", err, ex)
			continue
		}
		if tasks[0].PokeInterval != "" {
			tasks[0].Trigger["poke_interval"] = tasks[0].PokeInterval
		}
		if typ, err := check(tasks[0].Trigger, reg.Check); err != nil {
			t.Errorf("example of %q is refused: %v\n%s", typ, err, ex)
		}
	}
}

// TestWatcherReferenceDocumentsEveryType: docs/watchers.md has a section
// for every built-in type that can watch an asset, and each YAML example
// (an asset with one watcher) is accepted as a watcher.
func TestWatcherReferenceDocumentsEveryType(t *testing.T) {
	t.Parallel()
	reg := builtin.Registry()
	for _, ex := range documented(t, "watchers.md", "Watcher reference", trigger.UseWatcher) {
		var assets []struct {
			Watchers []struct {
				Trigger map[string]any `yaml:"trigger"`
			} `yaml:"watchers"`
		}
		if err := yaml.Unmarshal([]byte(ex), &assets); err != nil || len(assets) != 1 || len(assets[0].Watchers) != 1 {
			t.Errorf("example does not parse as one asset with one watcher (%v):\n%s", err, ex)
			continue
		}
		if typ, err := check(assets[0].Watchers[0].Trigger, reg.CheckWatcher); err != nil {
			t.Errorf("example of %q is refused: %v\n%s", typ, err, ex)
		}
	}
}

// documented checks that docs/name has a section and a table row for each
// built-in type with use u, and returns the YAML examples after the
// heading ref (one per such type at least).
func documented(t *testing.T, name, ref string, u trigger.Use) []string {
	t.Helper()
	raw, err := os.ReadFile("../../../docs/" + name)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	n := 0
	for _, tp := range builtin.Registry().Types() {
		if !tp.Can(u) {
			continue
		}
		n++
		if !strings.Contains(doc, "\n### `"+tp.Name+"`\n") || !strings.Contains(doc, "| [`"+tp.Name+"`](#"+tp.Name+") |") {
			t.Errorf("docs/%s lacks the section or the table row of trigger type %q", name, tp.Name)
		}
	}
	at := strings.Index(doc, "\n## "+ref+"\n")
	if at < 0 {
		t.Fatalf("docs/%s has no section %q", name, ref)
	}
	var out []string
	for _, m := range regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(doc[at:], -1) {
		out = append(out, m[1])
	}
	if len(out) < n {
		t.Errorf("docs/%s has %d YAML examples in its reference, want one per type (%d)", name, len(out), n)
	}
	return out
}

// check validates a trigger written as in a DAG file (type beside kwargs).
func check(tr map[string]any, fn func(trigger.Spec) error) (string, error) {
	typ, _ := tr["type"].(string)
	delete(tr, "type")
	b, _ := json.Marshal(tr)
	return typ, fn(trigger.Spec{Type: typ, Kwargs: b})
}

// TestKwargsRefusedNameTheKwarg: every built-in type refuses bad kwargs,
// through the registry as at DAG load, with an invalid-input error naming
// the kwarg and what is allowed.
func TestKwargsRefusedNameTheKwarg(t *testing.T) {
	t.Parallel()
	reg := builtin.Registry()
	for _, c := range []struct{ typ, kwargs, want string }{
		{"file", `{}`, `kwarg "path" is required`},
		{"file", `{"path":""}`, `kwarg "path" is required`},
		{"file", `{"path":"in/*.csv"}`, `kwarg "path" must be absolute`},
		{"file", `{"path":"/in/[a-"}`, `kwarg "path" is not a valid glob`},
		{"file", `{"path":"/in/a","min_size":-1}`, `kwarg "min_size" must be at least 0 bytes, got -1`},
		{"file", `{"path":"/in/a","min_size":"big"}`, `kwarg "min_size" must be a number`},
		{"file", `{"path":"/in/a","poke_interval":"-1s"}`, `kwarg "poke_interval" must be positive`},
		{"file", `{"path":"/in/a","poke_interval":"often"}`, `kwarg "poke_interval" must be a duration`},
		{"file", `{"path":"/in/a","pattern":"x"}`, `unknown kwarg "pattern"`},
		{"http", `{}`, `kwarg "url" is required`},
		{"http", `{"url":"ftp://host/x"}`, `kwarg "url" must be an absolute http(s) URL, got "ftp://host/x"`},
		{"http", `{"url":"/ready"}`, `kwarg "url" must be an absolute http(s) URL`},
		{"http", `{"url":"http://h/","http_conn_id":"api"}`, `kwarg "url" cannot be given with http_conn_id`},
		{"http", `{"endpoint":"jobs"}`, `kwarg "http_conn_id" is required with endpoint`},
		{"http", `{"http_conn_id":"api","endpoint":"http://other/x"}`, `kwarg "endpoint" must be a path relative to the connection's URL`},
		{"http", `{"url":"http://h/","method":"FETCH"}`, `kwarg "method" must be one of GET, HEAD`},
		{"http", `{"url":"http://h/","expect_status":[]}`, `kwarg "expect_status" must list at least one status code`},
		{"http", `{"url":"http://h/","expect_status":[2000]}`, `kwarg "expect_status" must hold HTTP status codes (100 to 599), got 2000`},
		{"http", `{"url":"http://h/","expect_status":200}`, `kwarg "expect_status" must be a list`},
		{"http", `{"url":"http://h/","json_query":".state =="}`, `kwarg "json_query" is not a valid jq expression`},
		{"http", `{"url":"http://h/","headers":{"X":1}}`, `kwarg "headers" must be a string, got JSON number`},
		{"http", `{"url":"http://h/","headers":{"Bad Name":"x"}}`, `kwarg "headers" holds "Bad Name", which is not a valid header name`},
		{"http", `{"url":"http://h/","headers":{"X":"a\nb"}}`, `kwarg "headers" holds "X"`},
		{"http", `{"url":"http://h/","timeout":"-5s"}`, `kwarg "timeout" must be positive, got -5s`},
		{"http", `{"url":"http://h/","poke_interval":"0s"}`, `kwarg "poke_interval" must be positive`},
		{"sql", `{"sql":"SELECT 1"}`, `kwarg "conn_id" is required`},
		{"sql", `{"conn_id":"db"}`, `kwarg "sql" is required`},
		{"sql", `{"conn_id":"db","sql":"  "}`, `kwarg "sql" is required`},
		{"sql", `{"conn_id":"db","sql":["SELECT 1"]}`, `kwarg "sql" must be a string`},
		{"sql", `{"conn_id":"db","sql":"SELECT 1","poke_interval":"-1m"}`, `kwarg "poke_interval" must be positive`},
		{"sql", `{"conn_id":"db","sql":"SELECT 1","max_rows":1}`, `unknown kwarg "max_rows"`},
		{"s3_key", `{"prefix":"in/"}`, `kwarg "conn_id" is required`},
		{"s3_key", `{"conn_id":"lake"}`, `kwarg "prefix" or glob is required, not both`},
		{"s3_key", `{"conn_id":"lake","prefix":"a","glob":"a*"}`, `kwarg "prefix" or glob is required, not both`},
		{"s3_key", `{"conn_id":"lake","glob":"in/[a-"}`, `kwarg "glob" is not a valid glob`},
		{"s3_key", `{"conn_id":"lake","bucket":"","prefix":"a"}`, `kwarg "bucket" must not be empty`},
		{"s3_key", `{"conn_id":"lake","prefix":"a","min_count":0}`, `kwarg "min_count" must be at least 1, got 0`},
		{"s3_key", `{"conn_id":"lake","prefix":"a","min_count":1.5}`, `kwarg "min_count" must be a number`},
		{"s3_key", `{"conn_id":"lake","prefix":"a","poke_interval":"1"}`, `kwarg "poke_interval" must be a duration`},
		{"s3_key", `{"conn_id":"lake","key":"a"}`, `unknown kwarg "key"`},
		{"external_task", `{"run_id":"r"}`, `kwarg "dag_id" is required`},
		{"external_task", `{"dag_id":"d"}`, `kwarg "run_id" is required`},
		{"external_task", `{"dag_id":"d","run_id":"r","task_id":""}`, `kwarg "task_id" must not be empty`},
		{"external_task", `{"dag_id":"d","run_id":"r","map_index":0}`, `kwarg "map_index" needs task_id`},
		{"external_task", `{"dag_id":"d","run_id":"r","task_id":"t","map_index":-2}`, `kwarg "map_index" must be -1 (not mapped) or an index from 0, got -2`},
		{"external_task", `{"dag_id":"d","run_id":"r","states":[]}`, `kwarg "states" must list at least one state`},
		{"external_task", `{"dag_id":"d","run_id":"r","states":["skipped"]}`, `kwarg "states" holds "skipped", which is not one of queued, running, success, failed`},
		{"external_task", `{"dag_id":"d","run_id":"r","task_id":"t","states":["done"]}`, `kwarg "states" holds "done", which is not one of scheduled, queued`},
		{"external_task", `{"dag_id":"d","run_id":"r","task_id":"t","failed_states":["none"]}`, `kwarg "failed_states" holds "none"`},
		{"external_task", `{"dag_id":"d","run_id":"r","states":["failed"]}`, `kwarg "failed_states" must not hold "failed", which states awaits`},
		{"external_task", `{"dag_id":"d","run_id":"r","poke_interval":"0s"}`, `kwarg "poke_interval" must be positive`},
		{"command", `{}`, `kwarg "argv" or command is required`},
		{"command", `{"argv":[]}`, `kwarg "argv" must start with a program name or path`},
		{"command", `{"argv":[""]}`, `kwarg "argv" must start with a program name or path`},
		{"command", `{"argv":"ls -l"}`, `kwarg "argv" must be a list`},
		{"command", `{"argv":["ls"],"command":"ls"}`, `kwarg "argv" cannot be given with command`},
		{"command", `{"command":" "}`, `kwarg "command" must not be empty`},
		{"command", `{"command":"ls","env":{"A=B":"x"}}`, `kwarg "env" holds the variable name "A=B"`},
		{"command", `{"command":"ls","env":{"A":1}}`, `kwarg "env" must be a string`},
		{"command", `{"command":"ls","cwd":"rel/dir"}`, `kwarg "cwd" must be an absolute folder`},
		{"command", `{"command":"ls","timeout":"5s"}`, `unknown kwarg "timeout"`},
		{"command", `{"command":"ls","poll_interval":"-5s"}`, `kwarg "poll_interval" must be positive`},
		{"sql_incremental", `{"table":"t","updated_column":"u","key_column":"k"}`, `kwarg "conn_id" is required`},
		{"sql_incremental", `{"conn_id":"db","updated_column":"u","key_column":"k"}`, `kwarg "table" or query is required`},
		{"sql_incremental", `{"conn_id":"db","table":"t","query":"SELECT 1","updated_column":"u","key_column":"k"}`, `kwarg "table" cannot be given with query`},
		{"sql_incremental", `{"conn_id":"db","table":"t; DROP TABLE x","updated_column":"u","key_column":"k"}`, `kwarg "table" must be a table name, optionally schema.table`},
		{"sql_incremental", `{"conn_id":"db","table":"a.b.c","updated_column":"u","key_column":"k"}`, `kwarg "table" must be a table name`},
		{"sql_incremental", `{"conn_id":"db","query":" ; ","updated_column":"u","key_column":"k"}`, `kwarg "query" must not be empty`},
		{"sql_incremental", `{"conn_id":"db","table":"t","key_column":"k"}`, `kwarg "updated_column" is required`},
		{"sql_incremental", `{"conn_id":"db","table":"t","updated_column":"u"}`, `kwarg "key_column" is required`},
		{"sql_incremental", `{"conn_id":"db","table":"t","updated_column":"u-1","key_column":"k"}`, `kwarg "updated_column" must be a column name`},
		{"sql_incremental", `{"conn_id":"db","table":"t","updated_column":"u","key_column":"k","partition_column":"a b"}`, `kwarg "partition_column" must be a column name`},
		{"sql_incremental", `{"conn_id":"db","table":"t","updated_column":"u","key_column":"k","lookback":"soon"}`, `kwarg "lookback" must be a positive duration such as "10m"`},
		{"sql_incremental", `{"conn_id":"db","table":"t","updated_column":"u","key_column":"k","lookback":-5}`, `kwarg "lookback" must be a positive number`},
		{"sql_incremental", `{"conn_id":"db","table":"t","updated_column":"u","key_column":"k","lookback":true}`, `kwarg "lookback" must be a duration such as "10m" or a number, got true`},
		{"sql_incremental", `{"conn_id":"db","table":"t","updated_column":"u","key_column":"k","max_items":0}`, `kwarg "max_items" must be from 1 to 10000`},
		{"sql_incremental", `{"conn_id":"db","table":"t","updated_column":"u","key_column":"k","route":{"a":"x*"}}`, `kwarg "route" needs route_column`},
		{"sql_incremental", `{"conn_id":"db","table":"t","updated_column":"u","key_column":"k","route_column":"r"}`, `kwarg "route_column" needs route`},
		{"sql_incremental", `{"conn_id":"db","table":"t","updated_column":"u","key_column":"k","route_column":"r","route":{"a":"[x"}}`, `kwarg "route" holds "[x" for asset "a", which is not a valid glob`},
		{"sql_incremental", `{"conn_id":"db","table":"t","updated_column":"u","key_column":"k","route_column":"r","route":{}}`, `kwarg "route" must name at least one asset`},
		{"sql_incremental", `{"conn_id":"db","table":"t","updated_column":"u","key_column":"k","poll_interval":"0s"}`, `kwarg "poll_interval" must be positive`},
		{"http_json", `{"items":".data[]","cursor":".t"}`, `kwarg "url" is required`},
		{"http_json", `{"url":"ftp://h/x","items":".data[]","cursor":".t"}`, `kwarg "url" must be an absolute http(s) URL`},
		{"http_json", `{"endpoint":"x","items":".data[]","cursor":".t"}`, `kwarg "http_conn_id" is required with endpoint`},
		{"http_json", `{"url":"http://h/","headers":{"Bad Name":"x"},"items":".data[]","cursor":".t"}`, `kwarg "headers" holds "Bad Name"`},
		{"http_json", `{"url":"http://h/","cursor":".t"}`, `kwarg "items" is required`},
		{"http_json", `{"url":"http://h/","items":".data[]"}`, `kwarg "cursor" is required`},
		{"http_json", `{"url":"http://h/","items":".data[","cursor":".t"}`, `kwarg "items" is not a valid jq expression`},
		{"http_json", `{"url":"http://h/","items":".data[]","cursor":".t","id":"..."}`, `kwarg "id" is not a valid jq expression`},
		{"http_json", `{"url":"http://h/","items":".data[]","cursor":".t","partition_key":"|"}`, `kwarg "partition_key" is not a valid jq expression`},
		{"http_json", `{"url":"http://h/","items":".data[]","cursor":".t","params":{"":"{{cursor}}"}}`, `kwarg "params" holds an empty parameter name`},
		{"http_json", `{"url":"http://h/","items":".data[]","cursor":".t","params":{"since":1}}`, `kwarg "params" must be a string`},
		{"http_json", `{"url":"http://h/","items":".data[]","cursor":".t","route":{"a":"x*"}}`, `kwarg "route" needs route_field`},
		{"http_json", `{"url":"http://h/","items":".data[]","cursor":".t","route_field":".r"}`, `kwarg "route_field" needs route`},
		{"http_json", `{"url":"http://h/","items":".data[]","cursor":".t","route_field":".r","route":{"a":"[x"}}`, `kwarg "route" holds "[x" for asset "a", which is not a valid glob`},
		{"http_json", `{"url":"http://h/","items":".data[]","cursor":".t","max_items":20000}`, `kwarg "max_items" must be from 1 to 10000`},
		{"http_json", `{"url":"http://h/","items":".data[]","cursor":".t","timeout":"0s"}`, `kwarg "timeout" must be positive`},
		{"http_json", `{"url":"http://h/","items":".data[]","cursor":".t","poll_interval":"soon"}`, `kwarg "poll_interval" must be a duration`},
	} {
		err := reg.Check(trigger.Spec{Type: c.typ, Kwargs: json.RawMessage(c.kwargs)})
		if err == nil || !errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %s: %v, want an invalid-input error containing %q", c.typ, c.kwargs, err, c.want)
		}
	}
}

// TestEveryTypeRefusesUnknownKwargs: a misspelt kwarg is an error naming
// it, for every type.
func TestEveryTypeRefusesUnknownKwargs(t *testing.T) {
	t.Parallel()
	for _, tp := range builtin.Types() {
		if _, err := tp.New(json.RawMessage(`{"poke_intervall":"1s"}`)); err == nil || !strings.Contains(err.Error(), `unknown kwarg "poke_intervall"`) {
			t.Errorf("%s with a misspelt kwarg: %v, want it named", tp.Name, err)
		}
	}
}

// An admin's cursor is checked as the watcher's polls read it: one they
// would refuse is refused when it is set (an ill-shaped cursor used to be
// stored, and the watcher then failed every poll). A command watcher's
// cursor is its program's own: any value.
func TestCheckCursor(t *testing.T) {
	reg := builtin.Registry()
	for _, tc := range []struct {
		typ, cursor string
		bad         string // a fragment of the error; "" = accepted
	}{
		{"directory", `{"modified":"2026-05-01T00:00:00Z","key":"a.csv"}`, ""},
		{"directory", `"garbage"`, `"modified" set`},
		{"s3_keys", `{"modified":"2026-05-01T00:00:00Z","keys":["a","b"]}`, ""},
		{"s3_keys", `{"after":"k7"}`, `"modified" set`},
		{"sql_incremental", `{"updated":"2026-05-01 10:00:00","key":41}`, ""},
		{"sql_incremental", `"garbage"`, "is not a sql_incremental cursor"},
		{"sql_incremental", `{"updated":null,"key":1}`, "is not a sql_incremental cursor"},
		{"http_json", `{"cursor":"2026-05-01T00:00:00Z","id":7}`, ""},
		{"http_json", `{"cursor":{"a":1}}`, "is not an http_json cursor"},
		{"command", `"anything"`, ""},
		{"someones.go_watcher", `"anything"`, ""},
	} {
		err := reg.CheckCursor(tc.typ, json.RawMessage(tc.cursor))
		switch {
		case tc.bad == "" && err != nil:
			t.Errorf("%s cursor %s refused: %v", tc.typ, tc.cursor, err)
		case tc.bad != "" && (err == nil || !strings.Contains(err.Error(), tc.bad) || !errors.Is(err, core.ErrInvalid)):
			t.Errorf("%s cursor %s: %v, want an invalid-input error with %q", tc.typ, tc.cursor, err, tc.bad)
		}
	}
}
