package objstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/weirflow/weir/internal/core"
)

// S3 is a Store in a bucket of an S3-compatible server (AWS S3, MinIO,
// SeaweedFS, …), reached with minio-go. Each key is stored as the object
// Prefix+key; a Put is a single PUT of the whole value (multipart above
// 16 MiB), which S3 makes visible atomically.
type S3 struct {
	client *minio.Client
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

// NewS3Client returns a minio-go client for cfg's server after checking
// cfg, for code that reads a bucket directly (the s3_key trigger); it does
// not contact the server.
func NewS3Client(cfg S3Config) (*minio.Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	lookup := minio.BucketLookupAuto
	switch cfg.Addressing {
	case AddressingPath:
		lookup = minio.BucketLookupPath
	case AddressingVirtualHost:
		lookup = minio.BucketLookupDNS
	case AddressingAuto:
	}
	client, err := minio.New(cfg.Endpoint, &minio.Options{
		Creds:        credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, cfg.SessionToken),
		Secure:       cfg.Secure,
		Region:       cfg.Region,
		BucketLookup: lookup,
	})
	if err != nil {
		return nil, fmt.Errorf("%w: S3 client for %s: %w", core.ErrInvalid, cfg.Endpoint, err)
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
	_, err = s.client.PutObject(ctx, s.cfg.Bucket, name, bytes.NewReader(data), int64(len(data)),
		minio.PutObjectOptions{ContentType: "application/octet-stream"})
	if err != nil {
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
	obj, err := s.client.GetObject(ctx, s.cfg.Bucket, name, minio.GetObjectOptions{})
	if err == nil {
		var data []byte
		data, err = io.ReadAll(obj)
		_ = obj.Close() // a read object has nothing left to flush
		if err == nil {
			return data, nil
		}
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
	if err := s.client.RemoveObject(ctx, s.cfg.Bucket, name, minio.RemoveObjectOptions{}); err != nil {
		if err := s.mapError(err); !errors.Is(err, core.ErrNotFound) {
			return fmt.Errorf("delete object %q from %s: %w", key, s.cfg, err)
		}
	}
	return nil
}

// List returns the keys starting with prefix, sorted.
func (s *S3) List(ctx context.Context, prefix string) ([]string, error) {
	if err := ValidatePrefix(prefix); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // stops minio-go's listing goroutine on an early return
	var keys []string
	for obj := range s.client.ListObjects(ctx, s.cfg.Bucket, minio.ListObjectsOptions{
		Prefix:    s.cfg.Prefix + prefix,
		Recursive: true,
	}) {
		if obj.Err != nil {
			return nil, fmt.Errorf("list objects with prefix %q in %s: %w", prefix, s.cfg, s.mapError(obj.Err))
		}
		key := strings.TrimPrefix(obj.Key, s.cfg.Prefix)
		if ValidateKey(key) != nil {
			continue // a folder marker or an object some other tool wrote
		}
		keys = append(keys, key)
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
	resp := minio.ToErrorResponse(err)
	switch resp.Code {
	case minio.NoSuchKey:
		return fmt.Errorf("%w: %w", core.ErrNotFound, err)
	case minio.NoSuchBucket:
		return fmt.Errorf("bucket %q does not exist (create it, or fix the URL): %w", s.cfg.Bucket, err)
	case "AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch":
		return fmt.Errorf("the server refused the credentials (set them in the URL or in "+
			"AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY): %w", err)
	}
	return err
}
