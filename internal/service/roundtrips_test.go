package service_test

import (
	"errors"
	"io"
	"net"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/logstore"
	"github.com/weirflow/weir/internal/runs"
	"github.com/weirflow/weir/internal/service"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/store/postgres"
	"github.com/weirflow/weir/internal/tasklog"
	"github.com/weirflow/weir/internal/tasklog/dblog"
	"github.com/weirflow/weir/internal/testutil/clocktest"
	"github.com/weirflow/weir/internal/testutil/pgtest"
	"github.com/weirflow/weir/internal/testutil/secretstest"
)

// On PostgreSQL the end of a try that queues what follows it, recorded
// with the claim of the worker's next try, takes three round trips in a
// chain: BEGIN, the end's update, the downstream read, the queueing lock
// and the queueing reads in one; the queueing update and the claim;
// COMMIT; the end of the try's log, stored with it, goes with the first.
// A join's last upstream reads the upstream counts first, with the
// downstream read, and then the lock and the queueing reads: four
// (docs/performance-history.md, nineteenth round). Counted by a loopback proxy
// between the store and the server, each burst the store writes one round
// trip, in later runs of the DAG (the first prepares the statements: a
// round trip each, once per connection).
func TestRoundTripsOfAnEndThatQueuesWhatFollowsOnPostgres(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		tasks  []core.Task
		before []string // ended first, without counting
		ends   string   // the end counted, which queues next
		next   string
		trips  int64
		log    bool // the end stores the try's whole log (its report's tail), as a worker's does
	}{
		{"chain", []core.Task{{TaskID: "a", Operator: "noop"}, {TaskID: "b", Operator: "noop", DependsOn: []string{"a"}}},
			nil, "a", "b", 3, false},
		{"chain_logged", []core.Task{{TaskID: "a", Operator: "noop"}, {TaskID: "b", Operator: "noop", DependsOn: []string{"a"}}},
			nil, "a", "b", 3, true},
		{"join", []core.Task{{TaskID: "a", Operator: "noop"}, {TaskID: "b", Operator: "noop"},
			{TaskID: "j", Operator: "noop", DependsOn: []string{"a", "b"}}}, []string{"a"}, "b", "j", 4, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			dsn, trips := countingProxy(t, pgtest.DSN(t))
			st, err := postgres.Open(ctx, dsn, postgres.Options{Secrets: secretstest.Box(), NoListen: true, MaxConns: 1})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = st.Close() })
			if err := st.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			svc := service.New(service.Config{Store: st, Clock: clocktest.New(t0)})
			logs := logstore.Recorded{Logs: dblog.Database{Store: st}, Store: st, Kind: store.TaskLogDatabase}
			syncDAG(t, st, core.DAG{DagID: c.name, Tasks: c.tasks})
			claim := &store.TaskInstanceClaimParams{WorkerID: "w", Queues: []string{core.DefaultQueue}, Limit: 1, Start: true, Hostname: "h", PID: 42}
			// The fewest of three counted runs: on a busy machine the server
			// may answer part of a batch before the client has written all
			// of it, which the proxy counts as one more round trip.
			fewest := int64(-1)
			for _, runID := range []string{"warm", "counted1", "counted2", "counted3"} {
				run, err := svc.TriggerRun(ctx, core.System, runs.TriggerParams{DagID: c.name, RunID: runID})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := st.DagRunSetState(ctx, &store.DagRunSetStateParams{ID: run.ID, To: core.RunRunning, Now: t0}); err != nil {
					t.Fatal(err)
				}
				started := map[string]*core.TaskInstance{}
				for _, task := range append(slices.Clone(c.before), c.ends) {
					started[task] = startTry(t, st, run, task)
				}
				for _, task := range c.before {
					if _, err := svc.EndTry(ctx, started[task], service.TryEnd{State: core.TISuccess, Claim: claim}); err != nil {
						t.Fatal(err)
					}
				}
				end := service.TryEnd{State: core.TISuccess, Claim: claim}
				if c.log {
					ti := started[c.ends]
					end.Before = func(tx store.Store) error {
						_, err := logs.InTx(tx).AppendAt(ctx, tasklog.KeyOf(ti), 0, []byte("done\n"))
						return err
					}
				}
				n := trips.Load()
				res, err := svc.EndTry(ctx, started[c.ends], end)
				n = trips.Load() - n
				if err != nil || len(res.Next) != 1 || res.Next[0].TaskID != c.next {
					t.Fatalf("%s: the end of %s: %+v, %v; want %s claimed", runID, c.ends, res, err, c.next)
				}
				if runID != "warm" && (fewest < 0 || n < fewest) {
					fewest = n
				}
				if _, err := svc.EndTry(ctx, &res.Next[0], service.TryEnd{State: core.TISuccess}); err != nil {
					t.Fatal(err)
				}
			}
			if fewest != c.trips {
				t.Errorf("the end of %s, queueing and claiming %s, took %d round trips (the fewest of three runs), want %d", c.ends, c.next, fewest, c.trips)
			}
		})
	}
}

// countingProxy forwards a loopback port to dsn's server and counts the
// round trips: the client's writes that follow an answer of the server
// (or open the connection). A burst the client's writes reach the proxy
// in two reads (a loaded machine) still counts once: the server answers
// only at its end. It returns dsn pointed at the proxy.
func countingProxy(t *testing.T, dsn string) (string, *atomic.Int64) {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		writes atomic.Int64
		wg     sync.WaitGroup
	)
	t.Cleanup(func() { _ = l.Close(); wg.Wait() })
	server := u.Host
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", server)
			if err != nil {
				_ = c.Close()
				continue
			}
			var answered atomic.Bool // the server wrote since the client last did
			answered.Store(true)
			wg.Go(func() {
				defer c.Close()
				buf := make([]byte, 1<<16)
				for {
					n, err := s.Read(buf)
					if n > 0 {
						answered.Store(true)
						if _, werr := c.Write(buf[:n]); werr != nil {
							return
						}
					}
					if err != nil {
						return
					}
				}
			})
			wg.Go(func() {
				defer s.Close()
				buf := make([]byte, 1<<16)
				for {
					n, err := c.Read(buf)
					if n > 0 {
						if answered.Swap(false) {
							writes.Add(1)
						}
						if _, werr := s.Write(buf[:n]); werr != nil {
							return
						}
					}
					if err != nil {
						if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
							t.Log("proxy:", err)
						}
						return
					}
				}
			})
		}
	})
	u.Host = l.Addr().String()
	return u.String(), &writes
}
