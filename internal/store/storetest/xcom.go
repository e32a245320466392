package storetest

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

func testXComRoundTrip(t *testing.T, f *fixture) {
	f.run("etl", "r1")
	values := map[string]string{
		"string": `"héllo \"quoted\" ✓"`,
		"int":    `42`,
		"big":    `9007199254740993`,
		"float":  `3.25`,
		"bool":   `true`,
		"null":   `null`,
		"list":   `[1,"two",[3],{"four":4}]`,
		"object": `{"a":{"b":[true,null]},"empty":{}}`,
	}
	for key, v := range values {
		must(t, f.st.XComSet(f.ctx, &core.XCom{DagID: "etl", RunID: "r1", TaskID: "t", MapIndex: core.NoMapIndex,
			Key: key, Value: json.RawMessage(v), Timestamp: f.now}), "set "+key)
	}
	for key, v := range values {
		x, err := f.st.XComGet(f.ctx, "etl", "r1", "t", core.NoMapIndex, key)
		must(t, err, "get "+key)
		want, got := decodeJSON(t, []byte(v)), decodeJSON(t, x.Value)
		if !cmp.Equal(want, got) {
			t.Errorf("xcom %s = %s, want %s", key, x.Value, v)
		}
		if !x.Timestamp.Equal(f.now) || x.DagID != "etl" || x.RunID != "r1" || x.TaskID != "t" || x.MapIndex != -1 {
			t.Errorf("xcom %s metadata = %+v", key, x)
		}
	}
	err := f.st.XComSet(f.ctx, &core.XCom{DagID: "etl", RunID: "r1", TaskID: "t", Key: "bad",
		Value: json.RawMessage(`{not json`), Timestamp: f.now})
	wantErr(t, err, core.ErrInvalid, "set invalid JSON")
	err = f.st.XComSet(f.ctx, &core.XCom{DagID: "etl", RunID: "nope", TaskID: "t", Key: "k",
		Value: json.RawMessage(`1`), Timestamp: f.now})
	wantErr(t, err, core.ErrNotFound, "set on unknown run")
	_, err = f.st.XComGet(f.ctx, "etl", "r1", "t", core.NoMapIndex, "absent")
	wantErr(t, err, core.ErrNotFound, "get absent")
}

func testXComUpsertListClear(t *testing.T, f *fixture) {
	f.run("etl", "r1")
	f.run("etl", "r2")
	set := func(run, task string, mi int, key, v string, at time.Time) {
		t.Helper()
		must(t, f.st.XComSet(f.ctx, &core.XCom{DagID: "etl", RunID: run, TaskID: task, MapIndex: mi, Key: key,
			Value: json.RawMessage(v), Timestamp: at}), "set")
	}
	set("r1", "b", 1, core.DefaultXComKey, `"b1"`, f.now)
	set("r1", "b", 0, core.DefaultXComKey, `"b0"`, f.now)
	set("r1", "a", -1, "z", `1`, f.now)
	set("r1", "a", -1, core.DefaultXComKey, `"old"`, f.now)
	set("r1", "a", -1, core.DefaultXComKey, `"new"`, f.at(time.Second))
	set("r2", "a", -1, core.DefaultXComKey, `"other run"`, f.now)

	list, err := f.st.XComList(f.ctx, &store.XComListParams{DagID: "etl", RunID: "r1"})
	must(t, err, "list run")
	var got []string
	for _, x := range list {
		got = append(got, x.TaskID+"["+strconv.Itoa(x.MapIndex+1)+"]"+x.Key+"="+string(x.Value))
	}
	want := []string{`a[0]return_value="new"`, `a[0]z=1`, `b[1]return_value="b0"`, `b[2]return_value="b1"`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("list (-want +got), ordered by task, map index, key; upsert replaces:\n%s", diff)
	}
	onlyB, err := f.st.XComList(f.ctx, &store.XComListParams{DagID: "etl", RunID: "r1", TaskID: "b"})
	must(t, err, "list task")
	if len(onlyB) != 2 {
		t.Errorf("task b has %d values, want 2", len(onlyB))
	}
	must(t, f.st.XComClear(f.ctx, "etl", "r1", "a", -1), "clear a")
	must(t, f.st.XComDelete(f.ctx, "etl", "r1", "b", 0, core.DefaultXComKey), "delete b[0]")
	must(t, f.st.XComDelete(f.ctx, "etl", "r1", "b", 0, core.DefaultXComKey), "delete absent")
	list, err = f.st.XComList(f.ctx, &store.XComListParams{DagID: "etl", RunID: "r1"})
	must(t, err, "list after clear")
	if len(list) != 1 || list[0].TaskID != "b" || list[0].MapIndex != 1 {
		t.Errorf("after clear and delete: %+v, want only b[1]", list)
	}
	other, err := f.st.XComGet(f.ctx, "etl", "r2", "a", -1, core.DefaultXComKey)
	must(t, err, "other run untouched")
	if string(other.Value) != `"other run"` {
		t.Errorf("other run's value = %s", other.Value)
	}
}
