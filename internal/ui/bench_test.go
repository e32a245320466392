package ui_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/weirflow/weir/internal/api"
	"github.com/weirflow/weir/internal/auth"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/service"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/testutil/postgrestest"
	"github.com/weirflow/weir/internal/testutil/sqlitetest"
	"github.com/weirflow/weir/internal/ui"
)

// BenchmarkRender times the server-side render of the grid of a DAG with
// 100 runs × 50 tasks (GET /dags/big?runs=100), of the DAGs list with 500
// DAGs of 3 runs each (GET /dags, a page of 50 with their last runs), of
// that DAG's filtered runs list (a page of 50 of 100), of one of its runs
// (50 instances with the Gantt chart) and that run's live part, and of the
// asset graph of 200 assets, 50 producing and 50 consuming DAGs,
// through the UI's handler (no network), on SQLite and PostgreSQL. Besides
// the mean it reports the median (p50-ms) and the process's CPU time per
// render (cpu-ms/op: user + system, which a loaded machine does not
// stretch as it stretches wall time). docs/benchmarks.md records the
// results:
//
//	go test -run '^$' -bench BenchmarkRender -benchtime 50x ./internal/ui
func BenchmarkRender(b *testing.B) {
	for _, engine := range []string{"sqlite", "postgres"} {
		st := benchStore(b, engine)
		h, cookie := benchUI(b, st)
		seedGrid(b, st, 100, 50)
		seedDags(b, st, 500, 3)
		seedAssets(b, st, 50, 4)
		for name, path := range map[string]string{"grid100x50": "/dags/big?runs=100", "dags500": "/dags",
			"runs100": "/dags/big/runs?run_type=manual", "run50": "/dags/big/runs/run_050", "runlive50": "/dags/big/runs/run_050/live",
			"assetgraph200": "/assets/graph", "gridlive100x50": "/dags/big/grid?runs=100",
			"ti": "/dags/big/runs/run_050/tasks/task_25", "tilive": "/dags/big/runs/run_050/tasks/task_25/live"} {
			b.Run(engine+"/"+name, func(b *testing.B) {
				var took []time.Duration
				cpu0 := cpuTime()
				for b.Loop() {
					req := httptest.NewRequest(http.MethodGet, path, nil)
					req.AddCookie(cookie)
					rec := httptest.NewRecorder()
					start := time.Now()
					h.ServeHTTP(rec, req)
					took = append(took, time.Since(start))
					if rec.Code != http.StatusOK {
						b.Fatalf("GET %s: %d", path, rec.Code)
					}
				}
				cpu := cpuTime() - cpu0
				slices.Sort(took)
				b.ReportMetric(float64(took[len(took)/2])/float64(time.Millisecond), "p50-ms")
				b.ReportMetric(float64(cpu)/float64(time.Millisecond)/float64(len(took)), "cpu-ms/op")
			})
		}
	}
}

func benchStore(b *testing.B, engine string) store.Store {
	b.Helper()
	if engine == "sqlite" {
		return sqlitetest.Open(b)
	}
	return postgrestest.Open(b)
}

// benchUI returns the UI over st and a session cookie of an admin.
func benchUI(b *testing.B, st store.Store) (http.Handler, *http.Cookie) {
	b.Helper()
	key := []byte("0123456789abcdef0123456789abcdef")
	if err := st.UserUpsert(b.Context(), &core.User{Username: "admin", Role: string(core.RoleAdmin), PasswordHash: "x", CreatedAt: time.Now()}); err != nil {
		b.Fatal(err)
	}
	h, err := ui.New(ui.Config{Store: st, Service: service.New(service.Config{Store: st}), SecretKey: key})
	if err != nil {
		b.Fatal(err)
	}
	v := auth.Sessions{Key: key}.Sign(auth.Session{Username: "admin"}, time.Now().Add(time.Hour))
	return h, &http.Cookie{Name: api.SessionCookie, Value: v}
}

// seedGrid records DAG "big" of tasks chained in fives and runs of it whose
// instances have finished in mixed states.
func seedGrid(b *testing.B, st store.Store, runs, tasks int) {
	b.Helper()
	spec := core.DAG{DagID: "big"}
	for i := range tasks {
		t := core.Task{TaskID: fmt.Sprintf("task_%02d", i), Operator: "noop"}
		if i%5 != 0 {
			t.DependsOn = []string{fmt.Sprintf("task_%02d", i-1)}
		}
		spec.Tasks = append(spec.Tasks, t)
	}
	v, _, err := st.DagSync(b.Context(), &store.DagSyncParams{Spec: spec, Hash: "big", Now: time.Now()})
	if err != nil {
		b.Fatal(err)
	}
	states := []core.TIState{core.TISuccess, core.TISuccess, core.TISuccess, core.TIFailed, core.TISkipped, core.TIUpstreamFailed}
	for r := range runs {
		var tis []store.NewTaskInstance
		for i, t := range spec.Tasks {
			tis = append(tis, store.NewTaskInstance{ID: uuid.NewString(), TaskID: t.TaskID, MapIndex: core.NoMapIndex, MaxTries: 1,
				Operator: "noop", State: states[(r+i)%len(states)]})
		}
		if _, err := st.DagRunCreate(b.Context(), &store.DagRunCreateParams{DagID: "big", RunID: fmt.Sprintf("run_%03d", r),
			RunType: core.RunManual, State: core.RunSuccess, DagVersionID: v, Now: time.Now(), TaskInstances: tis}); err != nil {
			b.Fatal(err)
		}
	}
}

// seedDags records n DAGs with tags and perDag runs each.
func seedDags(b *testing.B, st store.Store, n, perDag int) {
	b.Helper()
	for i := range n {
		id := fmt.Sprintf("dag_%03d", i)
		v, _, err := st.DagSync(b.Context(), &store.DagSyncParams{Spec: core.DAG{DagID: id, Schedule: "@daily", Tags: []string{"bench", fmt.Sprintf("team%d", i%7)},
			Tasks: []core.Task{{TaskID: "t", Operator: "noop"}}}, Hash: id, Now: time.Now()})
		if err != nil {
			b.Fatal(err)
		}
		for r := range perDag {
			if _, err := st.DagRunCreate(b.Context(), &store.DagRunCreateParams{DagID: id, RunID: fmt.Sprintf("r%d", r), RunType: core.RunManual,
				State: core.RunSuccess, DagVersionID: v, Now: time.Now()}); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// seedAssets records n producer DAGs, each with a task producing perDag
// assets, and n consumer DAGs, each scheduled on one producer's assets.
func seedAssets(b *testing.B, st store.Store, n, perDag int) {
	b.Helper()
	for i := range n {
		var assets []core.Asset
		var refs []core.AssetRef
		for j := range perDag {
			name := fmt.Sprintf("asset_%03d_%d", i, j)
			assets = append(assets, core.Asset{Name: name, URI: "s3://bench/" + name})
			refs = append(refs, core.AssetRef{Name: name})
		}
		for _, spec := range []core.DAG{
			{DagID: fmt.Sprintf("produce_%03d", i), Assets: assets, Tasks: []core.Task{{TaskID: "load", Operator: "noop", Outlets: refs}}},
			{DagID: fmt.Sprintf("consume_%03d", i), Assets: assets, AssetSchedule: refs, Tasks: []core.Task{{TaskID: "use", Operator: "noop", Inlets: refs[:1]}}},
		} {
			err := st.WithTx(b.Context(), func(tx store.Store) error {
				if _, _, err := tx.DagSync(b.Context(), &store.DagSyncParams{Spec: spec, Hash: spec.DagID, Now: time.Now()}); err != nil {
					return err
				}
				return tx.AssetSync(b.Context(), &store.AssetSyncParams{Spec: &spec, Now: time.Now()})
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	}
}

// cpuTime is the process's user + system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
