// Package s3watch holds the s3_keys watcher: it reports each object that
// appears (or is put again) under a prefix, or matching a glob, in a
// bucket of an S3-compatible store as an asset event, once, in order of
// Last-Modified. Connections are objstore's s3:// URLs, as s3_key's.
package s3watch

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/weirflow/weir/internal/objstore"
	"github.com/weirflow/weir/internal/s3client"
	"github.com/weirflow/weir/internal/trigger"
	"github.com/weirflow/weir/internal/trigger/listwatch"
	"github.com/weirflow/weir/internal/trigger/s3trigger"
)

// Type is the s3_keys watcher. kwargs: {"conn_id": "lake", "bucket":
// "landing", "prefix": "orders/"} or a "glob" such as "orders/*.parquet",
// and the listing watchers' route, max_items, min_age, partition_key and
// poll_interval.
var Type = trigger.Type{
	Name:        "s3_keys",
	Summary:     "watches an S3 bucket: an event for each object that appears or is put again under a prefix or matching a glob, once, oldest first",
	New:         newWatcher,
	Uses:        trigger.UseWatcher,
	CheckCursor: listwatch.CheckCursor,
}

// DefaultMinAge is min_age when not given: listings date objects to the
// second, and an object becomes visible when its upload ends, so an
// object younger than this may still be followed by one with an older
// Last-Modified (see docs/watchers.md#s3_keys).
const DefaultMinAge = 2 * time.Second

// Payload is the event of one object.
type Payload struct {
	Bucket   string    `json:"bucket"`
	Key      string    `json:"key"`
	Size     int64     `json:"size"`
	ETag     string    `json:"etag"`
	Modified time.Time `json:"modified"`
}

type s3Watcher struct {
	loc      s3trigger.Location
	opt      listwatch.Options
	interval time.Duration
}

func newWatcher(raw json.RawMessage) (trigger.Trigger, error) {
	var k struct {
		s3trigger.LocationKwargs
		listwatch.Kwargs
	}
	if err := trigger.DecodeKwargs(raw, &k); err != nil {
		return nil, err
	}
	loc, err := k.Location(false)
	if err != nil {
		return nil, err
	}
	w := &s3Watcher{loc: loc}
	if w.opt, w.interval, err = k.Options(DefaultMinAge); err != nil {
		return nil, err
	}
	return w, nil
}

func (w *s3Watcher) Run(ctx context.Context, rt *trigger.Runtime) error {
	var client *s3client.Client
	var cfg objstore.S3Config
	return listwatch.Run(ctx, rt, w.interval, w.opt, func(ctx context.Context, emit func(*listwatch.Item)) error {
		if client == nil {
			var err error
			if cfg, client, err = s3trigger.Connect(ctx, rt, w.loc); err != nil {
				return err
			}
		}
		return w.list(ctx, client, cfg, emit)
	})
}

// list lists the objects under the prefix (S3 lists in key order, whole:
// it cannot filter by time) and emits those the glob matches.
func (w *s3Watcher) list(ctx context.Context, client *s3client.Client, cfg objstore.S3Config, emit func(*listwatch.Item)) error {
	return s3trigger.List(ctx, client, cfg, w.loc, func(obj s3client.Object) bool {
		emit(&listwatch.Item{
			Key:      strings.TrimPrefix(obj.Key, cfg.Prefix), // as prefix, glob and route name it
			Modified: obj.LastModified,
			Payload:  Payload{Bucket: cfg.Bucket, Key: obj.Key, Size: obj.Size, ETag: strings.Trim(obj.ETag, `"`), Modified: obj.LastModified.UTC()},
		})
		return true
	})
}
