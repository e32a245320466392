package objstore_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/objstore"
	"github.com/weirflow/weir/internal/testutil/s3test"
)

// TestS3PrefixIsolates: stores on one bucket under different prefixes do
// not see each other's keys, and each object lies at prefix+key in the
// bucket, so other tools find it there.
func TestS3PrefixIsolates(t *testing.T) {
	t.Parallel()
	endpoint, bucket := s3test.Server(t)
	open := func(prefix string) objstore.Store {
		s, err := objstore.NewS3(objstore.S3Config{
			Endpoint: strings.TrimPrefix(endpoint, "http://"), Bucket: bucket, Prefix: prefix,
			Region: s3test.Region, Addressing: objstore.AddressingPath,
			AccessKey: s3test.AccessKey, SecretKey: s3test.SecretKey,
		})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	ctx := t.Context()
	a, b := open("tenant-a/"), open("tenant-b/")
	if err := a.Put(ctx, "k", []byte("from a")); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Get(ctx, "k"); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("store b sees store a's key: err = %v", err)
	}
	if keys, err := b.List(ctx, ""); err != nil || len(keys) != 0 {
		t.Errorf("store b lists %q, %v; want nothing", keys, err)
	}
	obj, err := s3test.Client(t).GetObject(ctx, bucket, "tenant-a/k", minio.GetObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	if got, err := io.ReadAll(obj); err != nil || string(got) != "from a" {
		t.Errorf("object tenant-a/k in the bucket = %q, %v", got, err)
	}
	if err := b.Delete(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if got, err := a.Get(ctx, "k"); err != nil || !bytes.Equal(got, []byte("from a")) {
		t.Errorf("store b's Delete reached store a: %q, %v", got, err)
	}
}

// TestS3RefusedCredentials: a wrong secret or no credentials at all is an
// error that names the credentials, never core.ErrNotFound (a caller must
// not take a misconfiguration for an absent value).
func TestS3RefusedCredentials(t *testing.T) {
	t.Parallel()
	endpoint, bucket := s3test.Server(t)
	q := url.Values{"endpoint": {endpoint}, "region": {s3test.Region}}.Encode()
	for name, rawURL := range map[string]string{
		"wrong secret": "s3://" + s3test.AccessKey + ":wrong@" + bucket + "?" + q,
		"anonymous":    "s3://" + bucket + "?" + q,
	} {
		cfg, err := objstore.ParseS3URLWithEnv(rawURL, func(string) string { return "" })
		if err != nil {
			t.Fatal(err)
		}
		s, err := objstore.NewS3(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Get(t.Context(), "k"); err == nil || errors.Is(err, core.ErrNotFound) ||
			!strings.Contains(err.Error(), "credentials") {
			t.Errorf("%s: Get = %v, want an error about credentials", name, err)
		}
		if err := s.Put(t.Context(), "k", []byte("v")); err == nil {
			t.Errorf("%s: Put succeeded", name)
		}
	}
}

// TestS3MissingBucket: reading a bucket that does not exist is a clear
// error, not core.ErrNotFound. (Writes are not checked: SeaweedFS creates a
// bucket on the first PUT into it, AWS refuses.)
func TestS3MissingBucket(t *testing.T) {
	t.Parallel()
	endpoint, _ := s3test.Server(t)
	u := s3test.URL(t, "")
	s, err := objstore.Open(strings.Replace(u, "@t-", "@missing-t-", 1))
	if err != nil {
		t.Fatal(err)
	}
	for op, err := range map[string]error{
		"Get":  errOf(s.Get(t.Context(), "k")),
		"List": errOf(s.List(t.Context(), "")),
	} {
		if err == nil || errors.Is(err, core.ErrNotFound) || !strings.Contains(err.Error(), "does not exist") {
			t.Errorf("%s on a missing bucket at %s = %v, want a does-not-exist error", op, endpoint, err)
		}
	}
}

// TestS3ListManyKeys lists past one S3 page (1,000 keys).
func TestS3ListManyKeys(t *testing.T) {
	t.Parallel()
	s, err := objstore.Open(s3test.URL(t, "many"))
	if err != nil {
		t.Fatal(err)
	}
	const n = 1100
	want := make([]string, 0, n)
	for i := range n {
		want = append(want, fmt.Sprintf("k/%04d", i))
	}
	errs := make(chan error, n)
	sem := make(chan struct{}, 16)
	for _, k := range want {
		sem <- struct{}{}
		go func() {
			defer func() { <-sem }()
			errs <- s.Put(t.Context(), k, []byte(k))
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.List(t.Context(), "k/")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("List returned %d keys, want %d in order", len(got), n)
	}
}

func errOf[T any](_ T, err error) error { return err }
