package s3trigger_test

import (
	"encoding/json"
	"net/url"
	"os"
	"testing"

	"github.com/weirflow/weir/internal/testutil/s3test"
	"github.com/weirflow/weir/internal/trigger"
	"github.com/weirflow/weir/internal/trigger/s3trigger"
	"github.com/weirflow/weir/internal/trigger/triggertest"
)

func TestMain(m *testing.M) { os.Exit(s3test.Main(m)) }

// TestGlobWaitsForMinCount: two objects matching the glob are needed; an
// object of another extension and one a level deeper never match; the
// event lists the two with their sizes and etags.
func TestGlobWaitsForMinCount(t *testing.T) {
	t.Parallel()
	conn := s3test.URL(t, "")
	bucket := s3test.BucketOf(t, conn)
	s3test.Put(t, bucket, "in/readme.txt", "x")
	s3test.Put(t, bucket, "in/sub/0.csv", "x")
	tr := triggertest.New(t, s3trigger.Type, `{"conn_id":"lake","glob":"in/*.csv","min_count":2,"poke_interval":"10ms"}`)
	run := triggertest.Start(t, tr, &trigger.Runtime{Connections: triggertest.Conns{"lake": conn}})
	s3test.Put(t, bucket, "in/1.csv", "a")
	s3test.Put(t, bucket, "in/2.csv", "bb")

	var got s3trigger.Payload
	if err := json.Unmarshal(run.Event(t), &got); err != nil {
		t.Fatal(err)
	}
	if got.Bucket != bucket || len(got.Keys) != 2 || got.Keys[0].Key != "in/1.csv" || got.Keys[1].Key != "in/2.csv" ||
		got.Keys[0].Size != 1 || got.Keys[1].Size != 2 || got.Keys[0].ETag == "" || got.Keys[0].LastModified.IsZero() {
		t.Errorf("event = %+v, want in/1.csv (1 byte) and in/2.csv (2 bytes) with etags in bucket %s", got, bucket)
	}
	if err := run.Wait(t); err != nil {
		t.Errorf("after its event the trigger returned %v", err)
	}
}

// TestPrefixUnderTheConnectionsPrefixInTheNamedBucket: the bucket kwarg
// replaces the connection's bucket and the connection's prefix goes
// before the prefix kwarg.
func TestPrefixUnderTheConnectionsPrefixInTheNamedBucket(t *testing.T) {
	t.Parallel()
	conn := s3test.URL(t, "landing")
	bucket := s3test.BucketOf(t, conn)
	u, _ := url.Parse(conn)
	u.Host = "some-other-bucket"
	s3test.Put(t, bucket, "day=1/part-0", "x") // outside the connection's prefix
	tr := triggertest.New(t, s3trigger.Type, `{"conn_id":"lake","bucket":"`+bucket+`","prefix":"day=1/","poke_interval":"10ms"}`)
	run := triggertest.Start(t, tr, &trigger.Runtime{Connections: triggertest.Conns{"lake": u.String()}})
	s3test.Put(t, bucket, "landing/day=1/part-0", "x")
	var got s3trigger.Payload
	if err := json.Unmarshal(run.Event(t), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Keys) != 1 || got.Keys[0].Key != "landing/day=1/part-0" {
		t.Errorf("event = %+v, want only landing/day=1/part-0", got)
	}
}

func TestCancelStopsAPollingTrigger(t *testing.T) {
	t.Parallel()
	conn := s3test.URL(t, "")
	tr := triggertest.New(t, s3trigger.Type, `{"conn_id":"lake","prefix":"never/"}`)
	run := triggertest.Start(t, tr, &trigger.Runtime{Connections: triggertest.Conns{"lake": conn}})
	run.Cancel(t)
}
