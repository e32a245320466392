// Package s3trigger holds the s3_key trigger: it fires once enough objects
// whose keys start with a prefix, or match a glob, exist in a bucket of an
// S3-compatible store (Airflow's S3KeySensor). Connections are objstore's
// s3:// URLs.
package s3trigger

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/weirflow/weir/internal/objstore"
	"github.com/weirflow/weir/internal/s3client"
	"github.com/weirflow/weir/internal/trigger"
)

// Type is the s3_key trigger. kwargs: {"conn_id": "lake", "bucket":
// "landing", "glob": "day=1/*.parquet", "min_count": 2}.
var Type = trigger.Type{
	Name:    "s3_key",
	Summary: "fires once at least min_count objects under a prefix or matching a glob exist in an S3 bucket",
	New:     newTrigger,
}

// s3Trigger is a built s3_key trigger.
type s3Trigger struct {
	loc      Location // with a prefix or a glob
	minCount int
	interval time.Duration
}

func newTrigger(raw json.RawMessage) (trigger.Trigger, error) {
	var k struct {
		LocationKwargs
		MinCount     *int    `json:"min_count"`
		PokeInterval *string `json:"poke_interval"`
	}
	if err := trigger.DecodeKwargs(raw, &k); err != nil {
		return nil, err
	}
	s := &s3Trigger{minCount: 1}
	loc, err := k.Location(true)
	switch {
	case err != nil:
		return nil, err
	case k.MinCount != nil && *k.MinCount < 1:
		return nil, trigger.Invalid("min_count", "must be at least 1, got %d", *k.MinCount)
	case k.MinCount != nil:
		s.minCount = *k.MinCount
	}
	s.loc = loc
	if s.interval, err = trigger.Interval("poke_interval", k.PokeInterval, trigger.DefaultPollInterval); err != nil {
		return nil, err
	}
	return s, nil
}

// Object is one matching object in an event.
type Object struct {
	Key          string    `json:"key"`
	Size         int64     `json:"size"`
	ETag         string    `json:"etag"`
	LastModified time.Time `json:"last_modified"`
}

// Payload is the s3_key trigger's event: the bucket and the matching
// objects in key order.
type Payload struct {
	Bucket string   `json:"bucket"`
	Keys   []Object `json:"keys"`
}

func (s *s3Trigger) Run(ctx context.Context, rt *trigger.Runtime) error {
	var client *s3client.Client
	var cfg objstore.S3Config
	return trigger.Poll(ctx, rt, s.interval, func(ctx context.Context) (any, bool, error) {
		if client == nil {
			var err error
			if cfg, client, err = Connect(ctx, rt, s.loc); err != nil {
				return nil, false, err
			}
		}
		return s.check(ctx, client, cfg)
	})
}

// check lists the matching objects, stopping once enough are listed.
func (s *s3Trigger) check(ctx context.Context, client *s3client.Client, cfg objstore.S3Config) (any, bool, error) {
	p := Payload{Bucket: cfg.Bucket, Keys: []Object{}}
	err := List(ctx, client, cfg, s.loc, func(obj s3client.Object) bool {
		p.Keys = append(p.Keys, Object{Key: obj.Key, Size: obj.Size, ETag: strings.Trim(obj.ETag, `"`), LastModified: obj.LastModified.UTC()})
		return len(p.Keys) < max(s.minCount, trigger.MaxListed)
	})
	if err != nil {
		return nil, false, err
	}
	return p, len(p.Keys) >= s.minCount, nil
}
