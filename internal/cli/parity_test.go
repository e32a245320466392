package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// [scheduler] create_cron_data_intervals = false (WEIR__ here) gives a
// cron DAG without a timetable Airflow 3's CronTriggerTimetable, which
// `dags show` names; a DAG's own timetable is kept.
func TestCreateCronDataIntervalsOffGivesCronTriggers(t *testing.T) {
	t.Parallel()
	dags, env := t.TempDir(), []string{"USER=tester", "WEIR_HOME=" + t.TempDir(), "WEIR__SCHEDULER__CREATE_CRON_DATA_INTERVALS=false"}
	if err := os.WriteFile(filepath.Join(dags, "onasset.yaml"), []byte("dag_id: onasset\nschedule: [orders]\nassets: [orders]\n"+
		"tasks:\n  - {task_id: t, operator: noop}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, extra := range map[string]string{"trig": "", "intervals": "timetable: CronDataIntervalTimetable\n"} {
		if err := os.WriteFile(filepath.Join(dags, name+".yaml"), []byte("dag_id: "+name+"\nschedule: \"0 6 * * *\"\nstart_date: 2024-01-01\n"+extra+
			"tasks:\n  - {task_id: t, operator: noop}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, dag := range []string{"trig", "intervals", "onasset"} { // each test records its DAG
		if code, out, errOut := weirRun(t, env, "dags", "test", dag, "--dags", dags); code != 0 {
			t.Fatalf("dags test %s: exit %d\n%s\n%s", dag, code, out, errOut)
		}
	}
	for dag, want := range map[string]string{"trig": "schedule: 0 6 * * * (CronTriggerTimetable)", "intervals": "schedule: 0 6 * * * (CronDataIntervalTimetable)",
		"onasset": "schedule: Asset: orders"} { // an asset schedule as dags list shows it
		if code, out, errOut := weirRun(t, env, "dags", "show", dag); code != 0 || !strings.Contains(out, want) {
			t.Errorf("dags show %s: exit %d\n%s\n%s\nwant %q", dag, code, out, errOut, want)
		}
	}
}

// Airflow's {{ var.value.get('k', default) }} renders the variable when
// it exists and the default when it does not; a plain var.value.k of a
// missing variable still fails the try, naming it.
func TestVariableWithADefault(t *testing.T) {
	t.Parallel()
	dags, env := t.TempDir(), []string{"USER=tester", "WEIR_HOME=" + t.TempDir()}
	if err := os.WriteFile(filepath.Join(dags, "v.yaml"), []byte("dag_id: v\ntasks:\n"+
		"  - {task_id: t, operator: bash, bash_command: \"echo region={{ var.value.get('region', 'eu') }} env={{ var.value.get('env', 'dev') }}\"}\n"+
		"  - {task_id: strict, operator: bash, depends_on: [t], bash_command: \"echo {{ var.value.env }}\"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"db", "migrate"}, {"variables", "set", "region", "us"}} {
		if code, out, errOut := weirRun(t, env, args...); code != 0 {
			t.Fatalf("%v: exit %d\n%s\n%s", args, code, out, errOut)
		}
	}
	code, out, errOut := weirRun(t, env, "dags", "test", "v", "--dags", dags)
	if !strings.Contains(out, "t | region=us env=dev") {
		t.Errorf("dags test: exit %d\n%s\n%s\nwant region=us env=dev", code, out, errOut)
	}
	if code == 0 || !strings.Contains(out, `variable "env" does not exist`) {
		t.Errorf("dags test: exit %d\n%s\n%s\nwant the strict task to fail naming env", code, out, errOut)
	}
}

// Airflow's prev_data_interval_start_success and the other names of the
// previous successful run: None for a DAG's first run, then the run
// before (by logical date) that succeeded, whatever ran since.
func TestPreviousSuccessfulRunInTemplates(t *testing.T) {
	t.Parallel()
	dags, env := t.TempDir(), []string{"USER=tester", "WEIR_HOME=" + t.TempDir()}
	if err := os.WriteFile(filepath.Join(dags, "inc.yaml"), []byte("dag_id: inc\nparams: {fail: no}\ntasks:\n"+
		"  - {task_id: t, operator: bash, bash_command: \"echo since={{ prev_data_interval_start_success }} "+
		"ended={{ prev_end_date_success is not none }}; [ {{ params.fail }} = no ]\"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ date, conf, want string }{
		{"2024-01-01", "", "t | since= ended=False"}, // none yet: empty (Airflow prints None), and none
		{"2024-01-02", "", "t | since=2024-01-01T00:00:00+00:00 ended=True"},
		{"2024-01-03", `{"fail": "yes"}`, "t | since=2024-01-02T00:00:00+00:00 ended=True"},
		{"2024-01-04", "", "t | since=2024-01-02T00:00:00+00:00 ended=True"}, // the failed run does not count
	} {
		args := []string{"dags", "test", "inc", c.date, "--dags", dags}
		if c.conf != "" {
			args = append(args, "--conf", c.conf)
		}
		if _, out, errOut := weirRun(t, env, args...); !strings.Contains(out, c.want) {
			t.Errorf("dags test inc %s: want %q in\n%s\n%s", c.date, c.want, out, errOut)
		}
	}
}
