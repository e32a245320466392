package objstore

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/s3client"
)

// S3 is a Store in a bucket of an S3-compatible server (AWS S3, MinIO,
// SeaweedFS, …), reached with s3client. Each key is stored as the object
// Prefix+key; a Put is a single PUT of the whole value, which S3 makes
// visible atomically.
type S3 struct {
	client *s3client.Client
	cfg    S3Config
}

// NewS3 returns a store for cfg after checking it; it does not contact the
// server.
func NewS3(cfg S3Config) (*S3, error) {
	client, err := NewS3Client(cfg)
	if err != nil {
		return nil, err
	}
	return &S3{client: client, cfg: cfg}, nil
}

// NewS3Client returns a client for cfg's server after checking cfg, for
// code that reads a bucket directly (the s3_key trigger); it does not
// contact the server.
func NewS3Client(cfg S3Config) (*s3client.Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	var pathStyle *bool
	switch cfg.Addressing {
	case AddressingPath, AddressingVirtualHost:
		path := cfg.Addressing == AddressingPath
		pathStyle = &path
	case AddressingAuto:
	}
	client, err := s3client.New(s3client.Config{Endpoint: cfg.Endpoint, Secure: cfg.Secure, Region: cfg.Region, PathStyle: pathStyle,
		Credentials: s3client.Credentials{AccessKey: cfg.AccessKey, SecretKey: cfg.SecretKey, SessionToken: cfg.SessionToken}})
	if err != nil {
		return nil, fmt.Errorf("%w: S3 client: %w", core.ErrInvalid, err)
	}
	return client, nil
}

// String names the store's location, without credentials.
func (s *S3) String() string { return s.cfg.String() }

// Put stores data under key.
func (s *S3) Put(ctx context.Context, key string, data []byte) error {
	name, err := s.objectName(key)
	if err != nil {
		return err
	}
	if err := s.client.Put(ctx, s.cfg.Bucket, name, data, "application/octet-stream"); err != nil {
		return fmt.Errorf("put object %q in %s: %w", key, s.cfg, s.mapError(err))
	}
	return nil
}

// Get returns the value under key.
func (s *S3) Get(ctx context.Context, key string) ([]byte, error) {
	name, err := s.objectName(key)
	if err != nil {
		return nil, err
	}
	data, err := s.client.Get(ctx, s.cfg.Bucket, name)
	if err == nil {
		return data, nil
	}
	return nil, fmt.Errorf("get object %q from %s: %w", key, s.cfg, s.mapError(err))
}

// Delete removes the value under key; S3 answers a delete of an absent
// object with success.
func (s *S3) Delete(ctx context.Context, key string) error {
	name, err := s.objectName(key)
	if err != nil {
		return err
	}
	if err := s.client.Delete(ctx, s.cfg.Bucket, name); err != nil {
		return fmt.Errorf("delete object %q from %s: %w", key, s.cfg, s.mapError(err))
	}
	return nil
}

// List returns the keys starting with prefix, sorted.
func (s *S3) List(ctx context.Context, prefix string) ([]string, error) {
	if err := ValidatePrefix(prefix); err != nil {
		return nil, err
	}
	var keys []string
	err := s.client.List(ctx, s.cfg.Bucket, s.cfg.Prefix+prefix, func(obj s3client.Object) bool {
		if key := strings.TrimPrefix(obj.Key, s.cfg.Prefix); ValidateKey(key) == nil { // not a folder marker or an object some other tool wrote
			keys = append(keys, key)
		}
		return true
	})
	if err != nil {
		return nil, fmt.Errorf("list objects with prefix %q in %s: %w", prefix, s.cfg, s.mapError(err))
	}
	// S3 lists in UTF-8 binary order already; this is a guard for servers
	// that do not.
	sort.Strings(keys)
	return keys, nil
}

// objectName validates key and prepends the store's prefix.
func (s *S3) objectName(key string) (string, error) {
	if err := ValidateKey(key); err != nil {
		return "", err
	}
	name := s.cfg.Prefix + key
	if len(name) > MaxKeyLen {
		return "", fmt.Errorf("%w: object key %q with the store prefix %q is %d bytes long; at most %d are allowed",
			core.ErrInvalid, key, s.cfg.Prefix, len(name), MaxKeyLen)
	}
	return name, nil
}

// mapError turns an absent object into core.ErrNotFound and explains the
// configuration errors a user can fix; other errors pass through.
func (s *S3) mapError(err error) error {
	switch s3client.Code(err) {
	case "NoSuchKey":
		return fmt.Errorf("%w: %w", core.ErrNotFound, err)
	case "NoSuchBucket":
		return fmt.Errorf("bucket %q does not exist (create it, or fix the URL): %w", s.cfg.Bucket, err)
	case "AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch":
		return fmt.Errorf("the server refused the credentials (set them in the URL or in "+
			"AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY): %w", err)
	}
	return err
}
