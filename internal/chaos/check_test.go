package chaos

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/testutil/weirtest"

	_ "modernc.org/sqlite" // PRAGMA integrity_check of a standalone's database
)

// check lets every run finish, then checks the trial's runs against what a
// user relies on; every anomaly fails the test and is counted.
func (d *deployment) check() {
	d.t.Helper()
	d.settle()
	d.fig.trials++
	runs := d.runs[d.checked:]
	d.checked = len(d.runs)
	d.fig.runs += len(runs)
	var bad []string
	for _, id := range runs {
		bad = append(bad, d.checkRun(id)...)
	}
	bad = append(bad, d.checkEvidence(runs)...)
	bad = append(bad, d.checkEvents()...)
	bad = append(bad, d.checkDatabase()...)
	for _, b := range bad {
		d.t.Errorf("%s: anomaly: %s", d.scenario, b)
	}
	d.fig.anomalies += len(bad)
}

// checkRun: the run succeeded, no task instance succeeded twice, and the
// run's producer recorded its asset event once.
func (d *deployment) checkRun(id string) []string {
	var bad []string
	run := d.api.Run(dagID, id)
	if run.State != core.RunSuccess {
		bad = append(bad, fmt.Sprintf("run %s ended %s, want success; %s", id, run.State, d.api.DescribeRun(dagID, id, run)))
	}
	tis := d.api.TaskInstances(dagID, id)
	if len(tis) != tisPerRun {
		bad = append(bad, fmt.Sprintf("run %s has %d task instances, want %d", id, len(tis), tisPerRun))
	}
	for _, ti := range tis {
		d.fig.tis++
		d.fig.tries += ti.TryNumber
		if ti.TryNumber < 2 {
			continue // one try cannot succeed twice
		}
		var tries struct {
			TaskInstances []core.TaskInstance `json:"task_instances"`
		}
		d.api.Get(fmt.Sprintf("%s/taskInstances/%s/tries?map_index=%d", weirtest.RunPath(dagID, id), ti.TaskID, ti.MapIndex), &tries)
		var won []string
		for _, tr := range tries.TaskInstances {
			if tr.State == core.TISuccess {
				won = append(won, strconv.Itoa(tr.TryNumber))
			}
		}
		if len(won) > 1 {
			bad = append(bad, fmt.Sprintf("run %s task %s[%d] has successful tries %v", id, ti.TaskID, ti.MapIndex, won))
		}
	}
	if run.State == core.RunSuccess {
		q := url.Values{"source_dag_id": {dagID}, "source_run_id": {id}, "source_task_id": {"produce"}}
		if evs := d.listEvents(q); len(evs) != 1 {
			bad = append(bad, fmt.Sprintf("run %s recorded %d asset events of produce, want 1", id, len(evs)))
		}
	}
	return bad
}

// checkEvidence: no task command ran to completion twice, and every task
// state write the API reported committed is still there.
func (d *deployment) checkEvidence(runs []string) []string {
	var bad []string
	mine := func(tt taskTry) bool { return !slices.Contains(runs, tt.run) }
	done, err := parseEvidence(d.ev.lines(d.t, "completions.log"))
	if err != nil {
		return []string{"completions.log: " + err.Error()}
	}
	twice, window := doubleCompletions(slices.DeleteFunc(done, mine), d.kills)
	for _, w := range twice {
		bad = append(bad, "task command ran to completion twice: "+w)
	}
	for _, w := range window {
		d.t.Logf("%s: at least once: task command ran again after a kill within %s of its end: %s", d.scenario, atLeastOnce, w)
	}
	d.fig.window += len(window)
	written, err := parseEvidence(d.ev.lines(d.t, "state.log"))
	if err != nil {
		return append(bad, "state.log: "+err.Error())
	}
	for _, w := range slices.DeleteFunc(written, mine) {
		path := weirtest.RunPath(dagID, w.run) + "/taskInstances/" + w.task + "/state-store/progress"
		status, b := d.api.Do(http.MethodGet, path, nil)
		var e struct {
			UpdatedBy core.StateWriter `json:"last_updated_by"`
		}
		switch {
		case status != http.StatusOK:
			bad = append(bad, fmt.Sprintf("task state progress of %s %s written by try %d is lost: status %d: %s", w.run, w.task, w.try, status, b))
		case json.Unmarshal(b, &e) != nil || e.UpdatedBy.TryNumber < w.try:
			bad = append(bad, fmt.Sprintf("task state progress of %s %s written by try %d now reads %s", w.run, w.task, w.try, b))
		}
	}
	return bad
}

// snapshot notes the asset events the API lists now: a later check finds
// each of them still there.
func (d *deployment) snapshot() {
	d.t.Helper()
	for _, e := range d.listEvents(url.Values{"source_dag_id": {dagID}}) {
		d.events[e.ID] = true
	}
}

// checkEvents: no asset event listed before a fault is lost.
func (d *deployment) checkEvents() []string {
	now := map[int64]bool{}
	for _, e := range d.listEvents(url.Values{"source_dag_id": {dagID}}) {
		now[e.ID] = true
	}
	var bad []string
	for id := range d.events {
		if !now[id] {
			bad = append(bad, fmt.Sprintf("asset event %d, listed before a fault, is lost", id))
		}
	}
	return bad
}

// listEvents lists asset events page by page (keyset, by id).
func (d *deployment) listEvents(q url.Values) []core.AssetEvent {
	d.t.Helper()
	var all []core.AssetEvent
	q.Set("limit", "100")
	for {
		var page struct {
			AssetEvents []core.AssetEvent `json:"asset_events"`
		}
		d.api.Get("/api/v2/assets/events?"+q.Encode(), &page)
		all = append(all, page.AssetEvents...)
		if len(page.AssetEvents) < 100 {
			return all
		}
		q.Set("after_id", strconv.FormatInt(page.AssetEvents[len(page.AssetEvents)-1].ID, 10))
	}
}

// checkDatabase: `weir db check` passes and a SQLite database passes
// PRAGMA integrity_check.
func (d *deployment) checkDatabase() []string {
	var bad []string
	if r := weirtest.Run(d.t, d.bin, d.env, "db", "check", "--home", d.home); r.Code != 0 {
		bad = append(bad, "weir db check: "+r.String())
	}
	if d.roles[0].name != standalone.name {
		return bad
	}
	db, err := sql.Open("sqlite", "file:"+filepath.Join(d.home, "weir.db")+"?mode=ro")
	if err != nil {
		return append(bad, "open the SQLite database: "+err.Error())
	}
	defer db.Close()
	var res string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&res); err != nil || res != "ok" {
		bad = append(bad, fmt.Sprintf("PRAGMA integrity_check: %q, %v", res, err))
	}
	return bad
}
