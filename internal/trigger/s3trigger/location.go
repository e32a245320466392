package s3trigger

import (
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/weirflow/weir/internal/objstore"
	"github.com/weirflow/weir/internal/s3client"
	"github.com/weirflow/weir/internal/trigger"
)

// Location is where an S3 trigger or watcher looks: the objects of a
// connection's bucket (or of Bucket) whose keys start with the
// connection's prefix then Prefix, or match the connection's prefix then
// Glob (at most one of Prefix and Glob).
type Location struct {
	ConnID, Bucket string
	Prefix, Glob   string
}

// LocationKwargs are the kwargs of a Location (conn_id, bucket, prefix,
// glob), embedded in a type's kwargs.
type LocationKwargs struct {
	ConnID *string `json:"conn_id"`
	Bucket *string `json:"bucket"`
	Prefix *string `json:"prefix"`
	Glob   *string `json:"glob"`
}

// Location validates the kwargs; with required, a prefix or a glob must be
// given (else neither means every object). Errors name the kwarg.
func (k *LocationKwargs) Location(required bool) (Location, error) {
	var loc Location
	switch {
	case k.ConnID == nil || *k.ConnID == "":
		return loc, trigger.Invalid("conn_id", "is required (a connection whose URI is s3://KEY:SECRET@bucket?endpoint=...)")
	case k.Bucket != nil && *k.Bucket == "":
		return loc, trigger.Invalid("bucket", "must not be empty (leave it out to use the connection's bucket)")
	case required && (k.Prefix == nil) == (k.Glob == nil):
		return loc, trigger.Invalid("prefix", "or glob is required, not both (a key prefix such as \"in/\", or a glob such as \"in/*.csv\")")
	case k.Prefix != nil && k.Glob != nil:
		return loc, trigger.Invalid("prefix", "cannot be given with glob (a key prefix such as \"in/\", or a glob such as \"in/*.csv\"; neither: every object)")
	case k.Glob != nil:
		if _, err := path.Match(*k.Glob, ""); err != nil || *k.Glob == "" {
			return loc, trigger.Invalid("glob", "is not a valid glob (* ? [a-z], '/' matched only by '/'): %q", *k.Glob)
		}
		loc.Glob = *k.Glob
	case k.Prefix != nil:
		loc.Prefix = *k.Prefix
	}
	loc.ConnID = *k.ConnID
	if k.Bucket != nil {
		loc.Bucket = *k.Bucket
	}
	return loc, nil
}

// Connect reads the s3:// URL of loc's connection: its endpoint,
// credentials and region, its bucket unless loc names one, and its prefix,
// which goes before loc's prefix or glob. A connection that is not defined
// or not an S3 URL is a Permanent error.
func Connect(ctx context.Context, rt *trigger.Runtime, loc Location) (objstore.S3Config, *s3client.Client, error) {
	u, err := rt.Connection(ctx, loc.ConnID)
	if err != nil {
		return objstore.S3Config{}, nil, err
	}
	cfg, err := objstore.ParseS3URL(u.String())
	if err != nil {
		return cfg, nil, trigger.Permanent(fmt.Errorf("connection %q: %w", loc.ConnID, err))
	}
	if loc.Bucket != "" {
		cfg.Bucket = loc.Bucket
	}
	client, err := objstore.NewS3Client(cfg)
	if err != nil {
		return cfg, nil, trigger.Permanent(fmt.Errorf("connection %q with bucket %q: %w", loc.ConnID, cfg.Bucket, err))
	}
	return cfg, client, nil
}

// List calls fn with each object of loc in cfg's bucket (Connect's), in
// key order, until fn returns false. S3 lists in key order only: finding
// what is new means listing the whole prefix.
func List(ctx context.Context, client *s3client.Client, cfg objstore.S3Config, loc Location, fn func(s3client.Object) bool) error {
	listPrefix, glob := cfg.Prefix+loc.Prefix, ""
	if loc.Glob != "" {
		glob = cfg.Prefix + loc.Glob
		listPrefix = glob[:strings.IndexAny(glob+"*", `*?[\`)] // the glob's literal start
	}
	err := client.List(ctx, cfg.Bucket, listPrefix, func(obj s3client.Object) bool {
		if ok, _ := path.Match(glob, obj.Key); glob != "" && !ok {
			return true
		}
		return fn(obj)
	})
	if err != nil {
		return fmt.Errorf("list bucket %q under %q: %w", cfg.Bucket, listPrefix, err)
	}
	return nil
}
