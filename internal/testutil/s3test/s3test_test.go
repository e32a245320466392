package s3test_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/weirflow/weir/internal/testutil/s3test"
)

func TestMain(m *testing.M) { os.Exit(s3test.Main(m)) }

// TestServerGivesIsolatedBuckets: two calls give two empty buckets, and an
// object in one is not in the other.
func TestServerGivesIsolatedBuckets(t *testing.T) {
	ctx := t.Context()
	endpoint, a := s3test.Server(t)
	_, b := s3test.Server(t)
	if a == b {
		t.Fatalf("two calls gave the same bucket %s", a)
	}
	if !strings.HasPrefix(endpoint, "http://127.0.0.1:") {
		t.Errorf("endpoint %s is not on loopback", endpoint)
	}
	c := s3test.Client(t)
	if _, err := c.PutObject(ctx, a, "k", strings.NewReader("v"), 1, minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.StatObject(ctx, b, "k", minio.StatObjectOptions{}); minio.ToErrorResponse(err).Code != minio.NoSuchKey {
		t.Errorf("object put in bucket %s is visible in %s: err = %v", a, b, err)
	}
}

// TestServerRequiresSignedRequests: the server checks signatures, so the
// S3 tests exercise real authentication.
func TestServerRequiresSignedRequests(t *testing.T) {
	endpoint, bucket := s3test.Server(t)
	resp, err := http.Get(endpoint + "/" + bucket + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("anonymous GET of a bucket answered %s, want 403", resp.Status)
	}
	bad, err := minio.New(strings.TrimPrefix(endpoint, "http://"), &minio.Options{
		Creds: credentials.NewStaticV4(s3test.AccessKey, "wrong-secret", ""), Region: s3test.Region,
		BucketLookup: minio.BucketLookupPath,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	_, err = bad.ListBuckets(ctx)
	var resp2 minio.ErrorResponse
	if !errors.As(err, &resp2) || resp2.StatusCode != http.StatusForbidden {
		t.Errorf("ListBuckets with a wrong secret = %v, want 403", err)
	}
}
