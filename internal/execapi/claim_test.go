package execapi_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/auth"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execapi"
	"github.com/weirflow/weir/internal/execapi/execapitest"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/job"
	"github.com/weirflow/weir/internal/store"
)

func manyTasks(id string, n int) core.DAG {
	d := core.DAG{DagID: id}
	for i := range n {
		d.Tasks = append(d.Tasks, core.Task{TaskID: fmt.Sprintf("t%03d", i), Operator: "noop"})
	}
	return d
}

func TestClaimExclusiveTwoClaimers(t *testing.T) {
	t.Parallel()
	env := execapitest.New(t, execapi.Config{})
	_, tis := env.SeedRun(t, manyTasks("d", 40), "r1", "")
	var mu sync.Mutex
	seen := map[string]string{}
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for _, w := range []string{"w1", "w2"} {
		c := env.WorkerClient(t, w)
		wg.Go(func() {
			for {
				wls, err := c.Claim(context.Background(), execclient.ClaimRequest{Limit: 3})
				if err != nil {
					errs <- err
					return
				}
				if len(wls) == 0 {
					return
				}
				mu.Lock()
				for _, wl := range wls {
					if prev, dup := seen[wl.TI.ID]; dup {
						errs <- fmt.Errorf("%s claimed by %s and %s", wl.TI.ID, prev, w)
					}
					seen[wl.TI.ID] = w
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if len(seen) != len(tis) {
		t.Fatalf("claimed %d of %d", len(seen), len(tis))
	}
	for id, w := range seen {
		if got := env.TI(t, id).WorkerID; got != w {
			t.Fatalf("%s: worker_id %q, claimed by %s", id, got, w)
		}
	}
}

func TestClaimValidation(t *testing.T) {
	t.Parallel()
	env := execapitest.New(t, execapi.Config{MaxClaimBatch: 5})
	c := env.WorkerClient(t, "w1")
	ctx := context.Background()
	_, err := c.Claim(ctx, execclient.ClaimRequest{Limit: 6})
	status(t, err, 400, "between 1 and 5")
	_, err = c.Claim(ctx, execclient.ClaimRequest{Limit: 1, WorkerID: "w2"})
	status(t, err, 403, "does not match")
	wls, err := c.Claim(ctx, execclient.ClaimRequest{Limit: 1, WaitSeconds: 0.01})
	if err != nil || len(wls) != 0 {
		t.Fatalf("empty claim = %v, %v", wls, err)
	}
}

// waitingClaim claims one try, waiting up to an hour, on a goroutine of
// its own; the channel receives what it got.
func waitingClaim(ctx context.Context, t *testing.T, c *execclient.Client) <-chan []execclient.Workload {
	got := make(chan []execclient.Workload, 1)
	go func() {
		wls, err := c.Claim(ctx, execclient.ClaimRequest{Limit: 1, WaitSeconds: 3600})
		if err != nil {
			t.Error(err)
		}
		got <- wls
	}()
	return got
}

// waitingWorker seeds a run of one scheduled try and has worker w1, heard
// now with a heartbeat every interval, wait for work; it returns the
// worker's job row, the run's tries, w1's client and what its claim gets.
func waitingWorker(ctx context.Context, t *testing.T, env *execapitest.Env, interval time.Duration) (
	core.Job, []core.TaskInstance, *execclient.Client, <-chan []execclient.Workload) {
	t.Helper()
	sig, c := signalledServer(t, env)
	beat := core.Job{ID: "w1-process", Role: job.WorkerRole, Hostname: "h", PID: 1, StartedAt: env.Clock.Now(),
		Heartbeat: env.Clock.Now(), WorkerID: "w1", Interval: interval}
	if err := env.Store.JobHeartbeat(ctx, &beat); err != nil {
		t.Fatal(err)
	}
	_, tis := env.SeedRun(t, manyTasks("d", 1), "r1", core.TIScheduled)
	got := waitingClaim(ctx, t, c)
	<-sig.subscribed
	return beat, tis, c, got
}

// queueAndNotify queues the try id and announces it, as a scheduler does.
func queueAndNotify(ctx context.Context, t *testing.T, env *execapitest.Env, id string) {
	t.Helper()
	if _, err := env.Store.TaskInstanceSetState(ctx, &store.TaskInstanceSetStateParams{IDs: []string{id}, To: core.TIQueued, Now: env.Clock.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := env.Store.Notify(ctx, store.ChannelQueued); err != nil {
		t.Fatal(err)
	}
}

// subscribeSignal is the real store, announcing each Subscribe call.
type subscribeSignal struct {
	store.Store
	subscribed chan string
}

func (s subscribeSignal) Subscribe(ctx context.Context, ch string) <-chan struct{} {
	c := s.Store.Subscribe(ctx, ch)
	s.subscribed <- ch
	return c
}

// signalledServer serves env's Execution API over a store that tells sig
// each channel a handler subscribes to, and returns a worker w1's client.
func signalledServer(t *testing.T, env *execapitest.Env, cfg ...execapi.Config) (subscribeSignal, *execclient.Client) {
	t.Helper()
	sig := subscribeSignal{Store: env.Store, subscribed: make(chan string, 2)}
	var c execapi.Config
	if len(cfg) > 0 {
		c = cfg[0]
	}
	srv := httptest.NewServer(execapi.NewHandler(execapi.Deps{Store: sig, Tokens: env.Tokens, Clock: env.Clock, Logger: slog.New(slog.DiscardHandler), Config: c}))
	t.Cleanup(srv.Close)
	tok, _ := env.Tokens.IssueWorker("w1", 0)
	return sig, execclient.NewClient(srv.URL+"/execution", tok, execclient.ClientOptions{Retries: -1})
}

func TestClaimLongPollWakesOnNotify(t *testing.T) {
	t.Parallel()
	env := execapitest.New(t, execapi.Config{})
	ctx := context.Background()
	sig, c := signalledServer(t, env)

	_, tis := env.SeedRun(t, manyTasks("d", 1), "r1", core.TIScheduled)
	got := waitingClaim(ctx, t, c) // far longer than the test takes unless woken by the notify
	if ch := <-sig.subscribed; ch != store.ChannelQueued {
		t.Fatalf("subscribed to %s", ch)
	}
	queueAndNotify(ctx, t, env, tis[0].ID)
	wls := <-got
	if len(wls) != 1 || wls[0].TI.ID != tis[0].ID || wls[0].Token == "" {
		t.Fatalf("woken claim = %+v", wls)
	}
}

// On SQLite a notification wakes only its own process: a try another
// process queued (another `weir dags test` of the DAG, a standalone) is
// found by the waiting claim's next look, every ClaimRecheck.
func TestClaimLongPollFindsUnnotifiedWork(t *testing.T) {
	t.Parallel()
	env := execapitest.New(t, execapi.Config{})
	ctx := context.Background()
	sig, c := signalledServer(t, env, execapi.Config{ClaimRecheck: 20 * time.Millisecond})

	_, tis := env.SeedRun(t, manyTasks("d", 1), "r1", core.TIScheduled)
	got := waitingClaim(ctx, t, c)
	<-sig.subscribed
	if _, err := env.Store.TaskInstanceSetState(ctx, &store.TaskInstanceSetStateParams{IDs: []string{tis[0].ID}, To: core.TIQueued, Now: env.Clock.Now()}); err != nil {
		t.Fatal(err)
	}
	select { // no Notify: another process's
	case wls := <-got:
		if len(wls) != 1 || wls[0].TI.ID != tis[0].ID {
			t.Fatalf("claim = %+v, want the queued try", wls)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the claim did not find a try queued without a notification (it waits its hour)")
	}
}

// A worker's callback loop waits for callbacks only: its claim is woken by
// a fired callback and not subscribed to the queued task instances (each
// task queued would otherwise wake it for nothing), and a task claim is
// not woken by callbacks.
func TestCallbackClaimWakesOnCallbacks(t *testing.T) {
	t.Parallel()
	env := execapitest.New(t, execapi.Config{})
	ctx := context.Background()
	sig, c := signalledServer(t, env)

	run, _ := env.SeedRun(t, manyTasks("d", 1), "r1", core.TIScheduled)
	got := make(chan *execclient.ClaimResponse, 1)
	go func() {
		// Waits far longer than the test takes unless woken by the notify.
		res, err := c.ClaimAll(ctx, execclient.ClaimRequest{CallbackLimit: 1, WaitSeconds: 3600})
		if err != nil {
			t.Error(err)
		}
		got <- res
	}()
	if ch := <-sig.subscribed; ch != store.ChannelCallbacks {
		t.Fatalf("a callback claim subscribed to %s, want %s only", ch, store.ChannelCallbacks)
	}
	cb := core.Callback{Level: core.CallbackDag, Event: core.OnFailure, DagID: "d", RunID: "r1", DagRunID: run.ID,
		MapIndex: core.NoMapIndex, Spec: core.CallbackSpec{Command: "notify"}, Outcome: "failed", State: core.CallbackQueued}
	if err := env.Store.CallbackInsert(ctx, []core.Callback{cb}, env.Clock.Now()); err != nil {
		t.Fatal(err)
	}
	if res := <-got; res == nil || len(res.Callbacks) != 1 || len(res.Workloads) != 0 {
		t.Fatalf("woken callback claim = %+v, want the callback", res)
	}
	select {
	case ch := <-sig.subscribed:
		t.Fatalf("a callback claim also subscribed to %s", ch)
	default:
	}
	if _, err := c.ClaimAll(ctx, execclient.ClaimRequest{Limit: 1}); err != nil {
		t.Fatal(err)
	}
	if ch := <-sig.subscribed; ch != store.ChannelQueued {
		t.Fatalf("a task claim subscribed to %s, want %s", ch, store.ChannelQueued)
	}
	select {
	case ch := <-sig.subscribed:
		t.Fatalf("a task claim also subscribed to %s", ch)
	default:
	}
}

// TestClaimLongPollEndsWhenTheServerDrains: once the api-server begins to
// shut down (the drain channel of its requests' base context closes), a
// claim waiting in its long poll answers at once with no work, so the
// graceful shutdown need not outwait it.
func TestClaimLongPollEndsWhenTheServerDrains(t *testing.T) {
	t.Parallel()
	env := execapitest.New(t, execapi.Config{})
	sig := subscribeSignal{Store: env.Store, subscribed: make(chan string, 1)}
	drain := make(chan struct{})
	srv := httptest.NewUnstartedServer(execapi.NewHandler(execapi.Deps{Store: sig, Tokens: env.Tokens, Clock: env.Clock, Logger: slog.New(slog.DiscardHandler)}))
	srv.Config.BaseContext = func(net.Listener) context.Context { return execapi.WithDrain(context.Background(), drain) }
	srv.Start()
	t.Cleanup(srv.Close)
	tok, _ := env.Tokens.IssueWorker("w1", 0)
	c := execclient.NewClient(srv.URL+"/execution", tok, execclient.ClientOptions{Retries: -1})

	type answer struct {
		wls []execclient.Workload
		err error
	}
	got := make(chan answer, 1)
	go func() {
		// Waits far longer than the test takes unless drained.
		wls, err := c.Claim(context.Background(), execclient.ClaimRequest{Limit: 1, WaitSeconds: 3600})
		got <- answer{wls, err}
	}()
	<-sig.subscribed // the claim is waiting
	close(drain)
	if a := <-got; a.err != nil || len(a.wls) != 0 {
		t.Fatalf("drained claim = %+v, %v; want no work and no error", a.wls, a.err)
	}
}

// A claim with start starts every claimed try for the claiming process and
// hands over its run context, as the run call would; the try's own run
// call is then answered from the same process only (its answer was lost),
// and a claim whose answer was lost comes back, started, to the process
// that made it.
func TestClaimStartsTries(t *testing.T) {
	t.Parallel()
	env := execapitest.New(t, execapi.Config{})
	env.SeedRun(t, manyTasks("d", 3), "r1", "")
	c := env.WorkerClient(t, "w1")
	by := &execclient.RunRequest{Hostname: "h1", PID: 4242}
	wls, err := c.Claim(t.Context(), execclient.ClaimRequest{Limit: 2, Start: by})
	if err != nil || len(wls) != 2 {
		t.Fatalf("claim: %v %v", wls, err)
	}
	for _, wl := range wls {
		ti := env.TI(t, wl.TI.ID)
		if wl.Run == nil || wl.Run.TI.State != core.TIRunning || wl.Run.DagRun.RunID != "r1" || wl.Run.MaxTries != ti.MaxTries ||
			ti.State != core.TIRunning || ti.Hostname != "h1" || ti.PID != 4242 || ti.StartDate == nil {
			t.Fatalf("claimed %s: run context %+v, stored %+v; want both running, started by h1/4242", wl.TI.TaskID, wl.Run, ti)
		}
		tc := c.WithToken(wl.Token, execclient.TaskIdentity{TIID: wl.TI.ID})
		if _, err := tc.Run(t.Context(), wl.TI.ID, execclient.RunRequest{Hostname: "h1", PID: 1}); err == nil {
			t.Errorf("another process started %s, already started by the claim", wl.TI.TaskID)
		}
		if rc, err := tc.Run(t.Context(), wl.TI.ID, *by); err != nil || rc.TI.State != core.TIRunning {
			t.Errorf("the claiming process's run call: %v %v", rc, err)
		}
	}
	// The answer was lost: the same process, holding nothing, gets both
	// back as they are, then the third, claimed and started.
	again, err := c.Claim(t.Context(), execclient.ClaimRequest{Limit: 3, Reclaim: true, Start: by})
	if err != nil || len(again) != 3 {
		t.Fatalf("reclaim: %d workloads, %v; want 3", len(again), err)
	}
	for i, wl := range again {
		if wl.Run == nil || wl.Run.TI.State != core.TIRunning || (i < 2 && wl.TI.ID != wls[i].TI.ID && wl.TI.ID != wls[1-i].TI.ID) {
			t.Errorf("reclaimed %d: %s run %+v", i, wl.TI.TaskID, wl.Run)
		}
	}
	// Without start, a claim starts nothing.
	env.SeedRun(t, manyTasks("d", 1), "r2", "")
	plain, err := c.Claim(t.Context(), execclient.ClaimRequest{Limit: 1})
	if err != nil || len(plain) != 1 || plain[0].Run != nil || env.TI(t, plain[0].TI.ID).State != core.TIQueued {
		t.Errorf("claim without start: %+v %v; want a queued claim without run context", plain, err)
	}
}

// A claim's long poll hands out nothing its worker could no longer get by
// asking anew. A worker stopped (SIGSTOP) while its claim waited got the
// retry of its own failed-over try, started it on paper, and had it failed
// over again two beats later: the retry spent, the run failed, with the
// other worker idle. Now a poll whose worker has missed a heartbeat ends
// empty and leaves the try queued for another.
func TestClaimLongPollLeavesASilentWorkersTriesQueued(t *testing.T) {
	t.Parallel()
	env := execapitest.New(t, execapi.Config{})
	ctx := context.Background()
	beat, tis, c, got := waitingWorker(ctx, t, env, time.Second)
	env.Clock.Advance(3 * time.Second) // w1 misses its beats (stopped) while its claim waits
	queueAndNotify(ctx, t, env, tis[0].ID)
	if wls := <-got; len(wls) != 0 {
		t.Fatalf("a silent worker's claim got %+v, want nothing", wls)
	}
	if ti, err := env.Store.TaskInstanceGet(ctx, tis[0].ID); err != nil || ti.State != core.TIQueued || ti.WorkerID != "" {
		t.Fatalf("the try after the silent worker's claim: %+v, %v; want it queued, no one's", ti, err)
	}
	// Heard again (SIGCONT), the worker claims it with its next request.
	beat.Heartbeat = env.Clock.Now()
	if err := env.Store.JobHeartbeat(ctx, &beat); err != nil {
		t.Fatal(err)
	}
	if wls, err := c.Claim(ctx, execclient.ClaimRequest{Limit: 1, WaitSeconds: 1}); err != nil || len(wls) != 1 {
		t.Fatalf("the heard worker's claim: %+v, %v; want the try", wls, err)
	}
}

// A worker heard within its interval gets what its waited claim finds:
// the silence check spares live workers.
func TestClaimLongPollServesAHeardWorker(t *testing.T) {
	t.Parallel()
	env := execapitest.New(t, execapi.Config{})
	ctx := context.Background()
	_, tis, _, got := waitingWorker(ctx, t, env, 5*time.Second)
	env.Clock.Advance(3 * time.Second) // past silentAfter, within the worker's interval
	queueAndNotify(ctx, t, env, tis[0].ID)
	if wls := <-got; len(wls) != 1 || wls[0].TI.ID != tis[0].ID {
		t.Fatalf("a heard worker's waited claim got %+v, want the try", wls)
	}
}

// A credential revoked while its worker's claim waits ends the poll with
// 401 (which stops the worker) rather than hand it a try: the revocation
// was checked only as the request arrived, up to a claim wait earlier.
func TestClaimLongPollEndsWhenItsCredentialIsRevoked(t *testing.T) {
	t.Parallel()
	env := execapitest.New(t, execapi.Config{})
	ctx := context.Background()
	sig, c := signalledServer(t, env)
	_, tis := env.SeedRun(t, manyTasks("d", 1), "r1", core.TIScheduled)
	type result struct {
		wls []execclient.Workload
		err error
	}
	got := make(chan result, 1)
	go func() {
		wls, err := c.Claim(ctx, execclient.ClaimRequest{Limit: 1, WaitSeconds: 3600})
		got <- result{wls, err}
	}()
	<-sig.subscribed
	env.Clock.Advance(time.Second) // the token was issued before the revocation
	if err := env.Store.CredentialRevoke(ctx, &core.CredentialRevocation{Scope: auth.ScopeWorker, Subject: "w1",
		RevokedBefore: env.Clock.Now(), RevokedBy: "admin"}); err != nil {
		t.Fatal(err)
	}
	env.Clock.Advance(time.Minute) // past the revocation cache's life
	queueAndNotify(ctx, t, env, tis[0].ID)
	res := <-got
	status(t, res.err, 401, "revoked")
	if ti, err := env.Store.TaskInstanceGet(ctx, tis[0].ID); err != nil || ti.State != core.TIQueued {
		t.Fatalf("the try after the revoked worker's claim: %+v, %v; want it queued", ti, err)
	}
}
