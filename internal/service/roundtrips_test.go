package service_test

import (
	"errors"
	"io"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/service"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/store/postgres"
	"github.com/weirflow/weir/internal/testutil/clocktest"
	"github.com/weirflow/weir/internal/testutil/pgtest"
	"github.com/weirflow/weir/internal/testutil/secretstest"
)

// On PostgreSQL the end of a chain step, recorded with the claim of the
// worker's next try, takes three round trips: BEGIN, the end's update,
// the downstream read, the queueing lock and the queueing reads in one;
// the queueing update and the claim; COMMIT (docs/benchmarks.md,
// nineteenth round). Counted by a loopback proxy between the store and the
// server: each burst the store writes is one round trip.
func TestAChainStepEndsInThreeRoundTripsOnPostgres(t *testing.T) {
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
	syncDAG(t, st, core.DAG{DagID: "chain", Tasks: []core.Task{
		{TaskID: "a", Operator: "noop"},
		{TaskID: "b", Operator: "noop", DependsOn: []string{"a"}},
		{TaskID: "c", Operator: "noop", DependsOn: []string{"b"}},
	}})
	run := runningRun(t, st, svc, "chain")
	claim := &store.TaskInstanceClaimParams{WorkerID: "w", Queues: []string{core.DefaultQueue}, Limit: 1, Start: true, Hostname: "h", PID: 42}
	end := func(ti *core.TaskInstance) (*service.FinishResult, int64) {
		t.Helper()
		before := trips.Load()
		res, err := svc.EndTry(ctx, ti, service.TryEnd{State: core.TISuccess, Claim: claim})
		if err != nil || len(res.Next) != 1 {
			t.Fatalf("end of %s: %+v, %v; want success and the next try claimed", ti.TaskID, res, err)
		}
		return res, trips.Load() - before
	}
	// The first end prepares the statements (a round trip each, once per
	// connection) and reads the DAG's version.
	first, _ := end(startTry(t, st, run, "a"))
	second, n := end(&first.Next[0])
	if second.Next[0].TaskID != "c" || second.Next[0].State != core.TIRunning {
		t.Fatalf("b's end claimed %s (%s), want c running", second.Next[0].TaskID, second.Next[0].State)
	}
	if n != 3 {
		t.Errorf("a chain step's end with the next claim took %d round trips, want 3", n)
	}
}

// countingProxy forwards a loopback port to dsn's server and counts the
// bursts its clients write; it returns dsn pointed at the proxy.
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
			wg.Go(func() { _, _ = io.Copy(c, s); _ = c.Close() })
			wg.Go(func() {
				defer s.Close()
				buf := make([]byte, 1<<16)
				for {
					n, err := c.Read(buf)
					if n > 0 {
						writes.Add(1)
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
