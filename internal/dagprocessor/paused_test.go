package dagprocessor

import (
	"path/filepath"
	"testing"
)

// A DAG file's is_paused_upon_creation decides whether it starts paused,
// over [core] dags_are_paused_at_creation (PauseNew), as Airflow's DAG
// argument does; only when the DAG is first recorded: a later change of the
// field leaves the DAG's paused flag to its users.
func TestIsPausedUponCreation(t *testing.T) {
	t.Parallel()
	for _, pauseNew := range []bool{true, false} {
		p, dir := newProcessor(t)
		p.PauseNew = pauseNew
		write(t, filepath.Join(dir, "stay.yaml"), "is_paused_upon_creation: false\n"+dagYAML("runs_at_once", "echo"))
		write(t, filepath.Join(dir, "wait.yaml"), "is_paused_upon_creation: true\n"+dagYAML("waits", "echo"))
		write(t, filepath.Join(dir, "plain.yaml"), dagYAML("plain", "echo"))
		syncOnce(t, p)
		for id, want := range map[string]bool{"runs_at_once": false, "waits": true, "plain": pauseNew} {
			if d := dagState(t, p, id); d == nil || d.IsPaused != want {
				t.Errorf("PauseNew %v: %s = %+v, want paused %v", pauseNew, id, d, want)
			}
		}
		write(t, filepath.Join(dir, "stay.yaml"), "is_paused_upon_creation: true\n"+dagYAML("runs_at_once", "echo changed"))
		syncOnce(t, p)
		if d := dagState(t, p, "runs_at_once"); d == nil || d.IsPaused {
			t.Errorf("PauseNew %v: changing is_paused_upon_creation later paused the DAG: %+v", pauseNew, d)
		}
	}
}
