// Package s3trigger holds the s3_key trigger: it fires once enough objects
// whose keys start with a prefix, or match a glob, exist in a bucket of an
// S3-compatible store (Airflow's S3KeySensor). Connections are objstore's
// s3:// URLs.
package s3trigger

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/weirflow/weir/internal/objstore"
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
	connID, bucket string
	prefix, glob   string // one of them
	minCount       int
	interval       time.Duration
}

func newTrigger(raw json.RawMessage) (trigger.Trigger, error) {
	var k struct {
		ConnID       *string `json:"conn_id"`
		Bucket       *string `json:"bucket"`
		Prefix       *string `json:"prefix"`
		Glob         *string `json:"glob"`
		MinCount     *int    `json:"min_count"`
		PokeInterval *string `json:"poke_interval"`
	}
	if err := trigger.DecodeKwargs(raw, &k); err != nil {
		return nil, err
	}
	s := &s3Trigger{minCount: 1}
	switch {
	case k.ConnID == nil || *k.ConnID == "":
		return nil, trigger.Invalid("conn_id", "is required (a connection whose URI is s3://KEY:SECRET@bucket?endpoint=...)")
	case k.Bucket != nil && *k.Bucket == "":
		return nil, trigger.Invalid("bucket", "must not be empty (leave it out to use the connection's bucket)")
	case (k.Prefix == nil) == (k.Glob == nil):
		return nil, trigger.Invalid("prefix", "or glob is required, not both (a key prefix such as \"in/\", or a glob such as \"in/*.csv\")")
	case k.MinCount != nil && *k.MinCount < 1:
		return nil, trigger.Invalid("min_count", "must be at least 1, got %d", *k.MinCount)
	case k.Glob != nil:
		if _, err := path.Match(*k.Glob, ""); err != nil || *k.Glob == "" {
			return nil, trigger.Invalid("glob", "is not a valid glob (* ? [a-z], '/' matched only by '/'): %q", *k.Glob)
		}
		s.glob = *k.Glob
	default:
		s.prefix = *k.Prefix
	}
	s.connID = *k.ConnID
	if k.Bucket != nil {
		s.bucket = *k.Bucket
	}
	if k.MinCount != nil {
		s.minCount = *k.MinCount
	}
	var err error
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
	var client *minio.Client
	var cfg objstore.S3Config
	return trigger.Poll(ctx, rt, s.interval, func(ctx context.Context) (any, bool, error) {
		if client == nil {
			var err error
			if cfg, client, err = s.connect(ctx, rt); err != nil {
				return nil, false, err
			}
		}
		return s.check(ctx, client, cfg)
	})
}

// connect reads the connection's s3:// URL: its endpoint, credentials and
// region, its bucket unless the bucket kwarg names one, and its prefix,
// which goes before prefix or glob.
func (s *s3Trigger) connect(ctx context.Context, rt *trigger.Runtime) (objstore.S3Config, *minio.Client, error) {
	u, err := rt.Connection(ctx, s.connID)
	if err != nil {
		return objstore.S3Config{}, nil, err
	}
	cfg, err := objstore.ParseS3URL(u.String())
	if err != nil {
		return cfg, nil, trigger.Permanent(fmt.Errorf("connection %q: %w", s.connID, err))
	}
	if s.bucket != "" {
		cfg.Bucket = s.bucket
	}
	client, err := objstore.NewS3Client(cfg)
	if err != nil {
		return cfg, nil, trigger.Permanent(fmt.Errorf("connection %q with bucket %q: %w", s.connID, cfg.Bucket, err))
	}
	return cfg, client, nil
}

// check lists the matching objects, stopping once enough are listed.
func (s *s3Trigger) check(ctx context.Context, client *minio.Client, cfg objstore.S3Config) (any, bool, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // stops minio-go's listing goroutine on an early return
	listPrefix, glob := cfg.Prefix+s.prefix, ""
	if s.glob != "" {
		glob = cfg.Prefix + s.glob
		listPrefix = glob[:strings.IndexAny(glob+"*", `*?[\`)] // the glob's literal start
	}
	p := Payload{Bucket: cfg.Bucket, Keys: []Object{}}
	for obj := range client.ListObjects(ctx, cfg.Bucket, minio.ListObjectsOptions{Prefix: listPrefix, Recursive: true}) {
		if obj.Err != nil {
			return nil, false, fmt.Errorf("list bucket %q under %q: %w", cfg.Bucket, listPrefix, obj.Err)
		}
		if ok, _ := path.Match(glob, obj.Key); glob != "" && !ok {
			continue
		}
		p.Keys = append(p.Keys, Object{Key: obj.Key, Size: obj.Size, ETag: strings.Trim(obj.ETag, `"`), LastModified: obj.LastModified.UTC()})
		if len(p.Keys) >= max(s.minCount, trigger.MaxListed) {
			break
		}
	}
	return p, len(p.Keys) >= s.minCount, nil
}
