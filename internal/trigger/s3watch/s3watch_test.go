package s3watch_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/testutil/s3test"
	"github.com/weirflow/weir/internal/trigger"
	"github.com/weirflow/weir/internal/trigger/s3watch"
	"github.com/weirflow/weir/internal/trigger/triggertest"
)

func TestMain(m *testing.M) { os.Exit(s3test.Main(m)) }

// TestNewObjectsEachOnceAcrossARestart: the objects under the prefix at the
// first poll, then each new one, are reported once with their bucket, key,
// size, etag and time; objects outside the prefix never; a run started
// again from the committed cursor reports only what came since.
func TestNewObjectsEachOnceAcrossARestart(t *testing.T) {
	t.Parallel()
	conn, bucket := newBucket(t)
	s3test.Put(t, bucket, "in/a.csv", "1")
	s3test.Put(t, bucket, "out/x.csv", "1")
	tr := triggertest.New(t, s3watch.Type, `{"conn_id":"lake","prefix":"in/","poll_interval":"10ms"}`)
	rt := func() *trigger.Runtime { return &trigger.Runtime{Connections: triggertest.Conns{"lake": conn}} }
	w := triggertest.NewWatcher("landing", trigger.AssetInfo{Name: "orders"})
	run := w.Start(t, tr, rt())
	p := triggertest.Payloads[s3watch.Payload](t, w.WaitEvents(t, "orders", 1))[0]
	if p.Bucket != bucket || p.Key != "in/a.csv" || p.Size != 1 || p.ETag == "" || p.Modified.IsZero() {
		t.Errorf("first event = %+v, want in/a.csv of 1 byte in %s with its etag and time", p, bucket)
	}
	s3test.Put(t, bucket, "in/b.csv", "22")
	if got := keys(t, w.WaitEvents(t, "orders", 2)); !slices.Equal(got, []string{"in/a.csv", "in/b.csv"}) {
		t.Errorf("events = %v, want in/a.csv, in/b.csv", got)
	}
	run.Cancel(t)

	again := triggertest.NewWatcher("landing", trigger.AssetInfo{Name: "orders"})
	again.SetCursor("orders", w.Cursor("orders"))
	again.Start(t, tr, rt())
	s3test.Put(t, bucket, "in/c.csv", "3")
	if got := keys(t, again.WaitEvents(t, "orders", 1)); !slices.Equal(got, []string{"in/c.csv"}) {
		t.Errorf("after a restart from the cursor: events = %v, want only in/c.csv", got)
	}
}

// TestABurstIsReportedWholeEachOnce: objects put while the watcher polls,
// in descending key order (so many share a Last-Modified second with a key
// before one already reported), with max_items smaller than the burst:
// every one is reported exactly once.
func TestABurstIsReportedWholeEachOnce(t *testing.T) {
	t.Parallel()
	conn, bucket := newBucket(t)
	w := watch(t, conn, `{"conn_id":"lake","glob":"burst/*.json","max_items":7,"poll_interval":"10ms"}`, trigger.AssetInfo{Name: "a"})
	var want []string
	for i := 40; i > 0; i-- {
		key := fmt.Sprintf("burst/%03d.json", i)
		s3test.Put(t, bucket, key, "x")
		want = append(want, key)
	}
	s3test.Put(t, bucket, "burst/~last.json", "x") // the newest and last in key order: once reported, every other was considered
	want = append(want, "burst/~last.json")
	w.WaitEvents(t, "a", 1)
	for !slices.Contains(keys(t, w.Events("a")), "burst/~last.json") {
		w.WaitEvents(t, "a", len(w.Events("a"))+1)
	}
	got := keys(t, w.Events("a"))
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("reported %d objects %v, want each of the %d once", len(got), got, len(want))
	}
}

// TestRouteSendsEachObjectToItsAsset: one listing serves both assets; an
// object no route matches is skipped; routes match keys after the
// connection's prefix, events name the whole key.
func TestRouteSendsEachObjectToItsAsset(t *testing.T) {
	t.Parallel()
	conn := s3test.URL(t, "landing/")
	bucket := s3test.BucketOf(t, conn)
	s3test.Put(t, bucket, "landing/eu/1.csv", "x")
	s3test.Put(t, bucket, "landing/asia/1.csv", "x")
	s3test.Put(t, bucket, "landing/us/1.csv", "x")
	s3test.Put(t, bucket, "eu/0.csv", "x") // outside the connection's prefix
	w := watch(t, conn, `{"conn_id":"lake","route":{"eu_orders":"eu/*","us_orders":"us/*"},"poll_interval":"10ms"}`, trigger.AssetInfo{Name: "eu_orders"}, trigger.AssetInfo{Name: "us_orders"})
	w.WaitEvents(t, "us_orders", 1)
	s3test.Put(t, bucket, "landing/eu/2.csv", "x")
	w.WaitEvents(t, "eu_orders", 2)
	if eu, us := keys(t, w.Events("eu_orders")), keys(t, w.Events("us_orders")); !slices.Equal(eu, []string{"landing/eu/1.csv", "landing/eu/2.csv"}) || !slices.Equal(us, []string{"landing/us/1.csv"}) {
		t.Errorf("eu_orders got %v, us_orders got %v; want landing/eu/1.csv, landing/eu/2.csv and landing/us/1.csv", eu, us)
	}
}

// TestAStoreThatIsDownIsAPollErrorRetried: polls fail (health shows
// them) and the watcher keeps running; an undefined connection ends it
// with an error naming the connection.
func TestAStoreThatIsDownIsAPollErrorRetried(t *testing.T) {
	t.Parallel()
	tr := triggertest.New(t, s3watch.Type, `{"conn_id":"lake","poll_interval":"10ms"}`)
	w := triggertest.NewWatcher("landing", trigger.AssetInfo{Name: "a"})
	w.Start(t, tr, &trigger.Runtime{Connections: triggertest.Conns{"lake": "s3://k:s@bucket?endpoint=http://127.0.0.1:1"}})
	deadline := time.Now().Add(triggertest.Bound)
	for len(w.PollErrors()) < 2 {
		if time.Now().After(deadline) {
			t.Fatal("no poll errors recorded for a store that is down")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := w.PollErrors()[0]; !strings.Contains(err.Error(), `list bucket "bucket"`) {
		t.Errorf("poll error = %v, want it to name the bucket", err)
	}

	gone := triggertest.NewWatcher("landing", trigger.AssetInfo{Name: "a"})
	run := gone.Start(t, tr, &trigger.Runtime{Connections: triggertest.Conns{}})
	if err := run.Wait(t); err == nil || !strings.Contains(err.Error(), `connection "lake"`) {
		t.Errorf("with no such connection the watcher returned %v, want an error naming it", err)
	}
}

func TestKwargsRefused(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ kwargs, want string }{
		{`{}`, `kwarg "conn_id" is required`},
		{`{"conn_id":"lake","bucket":""}`, `kwarg "bucket" must not be empty`},
		{`{"conn_id":"lake","prefix":"a/","glob":"a/*"}`, `kwarg "prefix" cannot be given with glob`},
		{`{"conn_id":"lake","glob":"[a-"}`, `kwarg "glob" is not a valid glob`},
		{`{"conn_id":"lake","prefix":1}`, `kwarg "prefix" must be a string`},
		{`{"conn_id":"lake","route":{"a":"[x"}}`, `kwarg "route" holds "[x" for asset "a"`},
		{`{"conn_id":"lake","max_items":-1}`, `kwarg "max_items" must be from 1 to 10000, got -1`},
		{`{"conn_id":"lake","min_age":"1"}`, `kwarg "min_age" must be a duration`},
		{`{"conn_id":"lake","partition_key":""}`, `kwarg "partition_key" must be a regular expression`},
		{`{"conn_id":"lake","poll_interval":"-5s"}`, `kwarg "poll_interval" must be positive`},
		{`{"conn_id":"lake","min_count":2}`, `unknown kwarg "min_count"`},
	} {
		_, err := s3watch.Type.New(json.RawMessage(c.kwargs))
		if err == nil || !errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an invalid-input error containing %q", c.kwargs, err, c.want)
		}
	}
}

// newBucket returns a connection URL to a new bucket, and the bucket.
func newBucket(t *testing.T) (conn, bucket string) {
	t.Helper()
	conn = s3test.URL(t, "")
	return conn, s3test.BucketOf(t, conn)
}

// watch runs an s3_keys watcher of kwargs (conn_id "lake" is conn) for
// assets.
func watch(t *testing.T, conn, kwargs string, assets ...trigger.AssetInfo) *triggertest.Watcher {
	t.Helper()
	w := triggertest.NewWatcher("landing", assets...)
	w.Start(t, triggertest.New(t, s3watch.Type, kwargs), &trigger.Runtime{Connections: triggertest.Conns{"lake": conn}})
	return w
}

func keys(t *testing.T, evs []trigger.WatchEvent) []string {
	t.Helper()
	var out []string
	for _, p := range triggertest.Payloads[s3watch.Payload](t, evs) {
		out = append(out, p.Key)
	}
	return out
}
