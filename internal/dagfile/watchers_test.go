package dagfile_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/dagfile"
	"github.com/weirflow/weir/internal/trigger"
	"github.com/weirflow/weir/internal/trigger/builtin"
)

// watcherTypes is the built-in registry plus a watcher type "ticks" whose
// kwarg every must be a string.
func watcherTypes(t *testing.T) *trigger.Registry {
	t.Helper()
	reg := builtin.Registry()
	err := reg.Register(trigger.Type{Name: "ticks", Uses: trigger.UseWatcher, New: func(raw json.RawMessage) (trigger.Trigger, error) {
		var k struct {
			Every string `json:"every"`
		}
		if err := trigger.DecodeKwargs(raw, &k); err != nil {
			return nil, err
		}
		return nop{}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

type nop struct{}

func (nop) Run(context.Context, *trigger.Runtime) error { return nil }

func loadWatchers(t *testing.T, assets string) error {
	t.Helper()
	reg := watcherTypes(t)
	doc := "dag_id: w\nschedule: [a]\nassets:\n" + assets + "tasks:\n  - task_id: t\n    operator: noop\n"
	_, err := dagfile.LoadWith("w.yaml", []byte(doc), dagfile.Options{CheckTrigger: reg.CheckLoaded, CheckWatcher: reg.CheckWatcher})
	return err
}

func TestWatchersLoad(t *testing.T) {
	reg := watcherTypes(t)
	dags, err := dagfile.LoadWith("w.yaml", []byte(`dag_id: w
schedule: [a]
assets:
  - name: a
    watchers:
      - name: fast
        trigger: {type: ticks, every: 1s}
      - name: slow
        trigger:
          type: ticks
          every: 1m
tasks:
  - task_id: t
    operator: noop
`), dagfile.Options{CheckWatcher: reg.CheckWatcher})
	if err != nil {
		t.Fatal(err)
	}
	ws := dags[0].Assets[0].Watchers
	if len(ws) != 2 || ws[0].Name != "fast" || ws[0].Trigger.Type != "ticks" || string(ws[0].Trigger.Kwargs) != `{"every":"1s"}` ||
		ws[1].Name != "slow" || string(ws[1].Trigger.Kwargs) != `{"every":"1m"}` {
		t.Errorf("watchers = %+v, want fast and slow ticks with their kwargs", ws)
	}
}

func TestWatcherRefusalsNameTheField(t *testing.T) {
	cases := map[string]struct{ assets, want string }{
		"unknown type": {`  - name: a
    watchers:
      - name: x
        trigger: {type: nope}
`, `w.yaml:7:18: assets[0].watchers[0].trigger: unknown trigger type "nope" (types that watch: `},
		"fires once": {`  - name: a
    watchers:
      - name: x
        trigger: {type: file, path: /in/a}
`, `assets[0].watchers[0].trigger: trigger type "file" cannot watch an asset: it fires once, for a deferred task (types that watch: `},
		"bad kwarg": {`  - name: a
    watchers:
      - name: x
        trigger: {type: ticks, every: 5}
`, `w.yaml:7:18: assets[0].watchers[0].trigger: trigger ticks: kwargs: kwarg "every" must be a string`},
		"no name": {`  - name: a
    watchers:
      - trigger: {type: ticks}
`, `assets[0].watchers[0].name: is required`},
		"no trigger": {`  - name: a
    watchers:
      - name: x
`, `assets[0].watchers[0].trigger: is required`},
		"no type": {`  - name: a
    watchers:
      - {name: x, trigger: {every: 1s}}
`, `assets[0].watchers[0].trigger: type is required`},
		"twice": {`  - name: a
    watchers:
      - {name: x, trigger: {type: ticks, every: 1s}}
      - {name: x, trigger: {type: ticks, every: 2s}}
`, `assets[0].watchers[1].name: watcher "x" is declared twice on this asset (also assets[0].watchers[0])`},
		"same trigger": {`  - name: a
    watchers:
      - {name: x, trigger: {type: ticks, every: 1s}}
      - {name: y, trigger: {every: 1s, type: ticks}}
`, `assets[0].watchers[1].trigger: is the same trigger as assets[0].watchers[0]'s`},
		"not a list": {`  - name: a
    watchers: {name: x}
`, `w.yaml:5:15: assets[0].watchers: must be a list of watchers`},
		"unknown field": {`  - name: a
    watchers:
      - {name: x, trigger: {type: ticks}, every: 1s}
`, `w.yaml:6:43: assets[0].watchers[0].every: unknown field; allowed: name, trigger`},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			err := loadWatchers(t, c.assets)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("load error = %v\nwant it to contain %q", err, c.want)
			}
		})
	}
}

// TestDeferralOfAWatcherOnlyTypeIsRefused: a sensor cannot wait on a type
// that only watches.
func TestDeferralOfAWatcherOnlyTypeIsRefused(t *testing.T) {
	reg := watcherTypes(t)
	_, err := dagfile.LoadWith("s.yaml", []byte("dag_id: s\ntasks:\n  - task_id: w\n    operator: sensor\n    trigger: {type: ticks}\n"),
		dagfile.Options{CheckTrigger: reg.CheckLoaded})
	if err == nil || !strings.Contains(err.Error(), `trigger type "ticks" runs only as an asset watcher`) {
		t.Errorf("load error = %v, want the watcher-only type refused for a sensor", err)
	}
}
