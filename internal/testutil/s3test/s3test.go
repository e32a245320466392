// Package s3test gives tests a real S3-compatible server: SeaweedFS's
// `weed server -s3`, one per test binary, on free loopback ports, with
// signed requests required (AccessKey/SecretKey). Every test gets a fresh
// bucket.
//
// A package using it wraps its tests:
//
//	func TestMain(m *testing.M) { os.Exit(s3test.Main(m)) }
//
// and calls Server(t) or URL(t, prefix). The weed binary is found in this
// order: $WEIR_WEED_BIN; the cache path tools/seaweedfs/build.sh prints
// (~/.cache/weir-tools/weed-HASH); or, when WEIR_REQUIRE_S3=1 or
// WEIR_BUILD_WEED=1, built by that script (minutes the first time).
// Without a binary the test is skipped, unless WEIR_REQUIRE_S3=1 (set in
// CI), when it fails.
package s3test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// Environment variables read by this package.
const (
	EnvWeedBin = "WEIR_WEED_BIN"   // path of a weed binary to use
	EnvRequire = "WEIR_REQUIRE_S3" // "1": fail instead of skip without weed; build it if missing
	EnvBuild   = "WEIR_BUILD_WEED" // "1": build weed if missing instead of skipping
)

// Credentials the server requires; requests signed with anything else are
// refused.
const (
	AccessKey = "weirtest"
	SecretKey = "weirtest-secret-key"
	Region    = "us-east-1"
)

var (
	mainCalled bool
	once       sync.Once
	server     *weedServer
	startErr   error
	skipReason string // set instead of startErr when no binary is available
)

// Main runs the package's tests and stops the server, if one was started,
// afterwards. It returns the exit code for os.Exit.
func Main(m interface{ Run() int }) int {
	mainCalled = true
	code := m.Run()
	if server != nil {
		if err := server.stop(); err != nil {
			fmt.Fprintf(os.Stderr, "s3test: %v\n", err)
		}
	}
	return code
}

// Wrap returns m with the S3 server's lifetime around its Run, to nest in
// another harness's Main: pgtest.Main(s3test.Wrap(m)).
func Wrap(m interface{ Run() int }) interface{ Run() int } { return wrapped{m} }

type wrapped struct{ m interface{ Run() int } }

func (w wrapped) Run() int { return Main(w.m) }

// Server returns the S3 endpoint ("http://127.0.0.1:PORT") and the name
// of a new, empty bucket for t, starting the server on first use. The
// bucket is removed when t ends. It skips or fails t when no weed binary
// is available.
func Server(t testing.TB) (endpoint, bucket string) {
	t.Helper()
	s := start(t)
	bucket = "t-" + randomHex(12)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.client.MakeBucket(ctx, bucket, minio.MakeBucketOptions{Region: Region}); err != nil {
		t.Fatalf("s3test: create bucket %s: %v", bucket, err)
	}
	t.Cleanup(func() { removeBucket(t, s.client, bucket) })
	return s.endpoint, bucket
}

// URL returns an objstore URL for a new bucket of t's own, with the
// credentials in its user info:
// s3://KEY:SECRET@BUCKET/PREFIX?endpoint=...&region=....
func URL(t testing.TB, prefix string) string {
	t.Helper()
	endpoint, bucket := Server(t)
	u := url.URL{
		Scheme:   "s3",
		User:     url.UserPassword(AccessKey, SecretKey),
		Host:     bucket,
		Path:     "/" + prefix,
		RawQuery: url.Values{"endpoint": {endpoint}, "region": {Region}}.Encode(),
	}
	return u.String()
}

// Client returns a minio-go client for the test server, signed with the
// test credentials, for assertions that look at the bucket directly.
func Client(t testing.TB) *minio.Client {
	t.Helper()
	return start(t).client
}

// BucketOf returns the bucket of a URL that URL returned.
func BucketOf(t testing.TB, conn string) string {
	t.Helper()
	u, err := url.Parse(conn)
	if err != nil {
		t.Fatalf("s3test: %v", err)
	}
	return u.Host
}

// Put writes an object of data under key in bucket, failing t on an error.
func Put(t testing.TB, bucket, key, data string) {
	t.Helper()
	_, err := Client(t).PutObject(t.Context(), bucket, key, strings.NewReader(data), int64(len(data)), minio.PutObjectOptions{})
	if err != nil {
		t.Fatalf("s3test: put %s: %v", key, err)
	}
}

// start starts the shared server once and returns it, or skips or fails t.
func start(t testing.TB) *weedServer {
	t.Helper()
	if !mainCalled {
		t.Fatal("s3test: the package's TestMain must call s3test.Main(m) so the server is stopped")
	}
	once.Do(func() {
		var bin string
		bin, skipReason, startErr = findWeed()
		if startErr != nil || skipReason != "" {
			return
		}
		server, startErr = startWeed(bin)
	})
	switch {
	case startErr != nil:
		t.Fatalf("s3test: %v", startErr)
	case skipReason != "":
		if os.Getenv(EnvRequire) == "1" {
			t.Fatalf("s3test: an S3 server is required (%s=1) but unavailable: %s", EnvRequire, skipReason)
		}
		t.Skipf("s3test: %s", skipReason)
	}
	return server
}

// newClient returns a path-style minio-go client for a local endpoint.
func newClient(hostPort string) (*minio.Client, error) {
	c, err := minio.New(hostPort, &minio.Options{
		Creds:        credentials.NewStaticV4(AccessKey, SecretKey, ""),
		Region:       Region,
		BucketLookup: minio.BucketLookupPath,
	})
	if err != nil {
		return nil, fmt.Errorf("S3 client for %s: %w", hostPort, err)
	}
	return c, nil
}

// removeBucket deletes every object in bucket, then the bucket, so the
// server's volumes do not pile up over a long test binary.
func removeBucket(t testing.TB, c *minio.Client, bucket string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	objects := c.ListObjects(ctx, bucket, minio.ListObjectsOptions{Recursive: true})
	for res := range c.RemoveObjects(ctx, bucket, objects, minio.RemoveObjectsOptions{}) {
		if res.Err != nil {
			t.Logf("s3test: remove %s/%s: %v", bucket, res.ObjectName, res.Err)
		}
	}
	if err := c.RemoveBucket(ctx, bucket); err != nil {
		t.Logf("s3test: remove bucket %s: %v", bucket, err)
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return hex.EncodeToString(b)
}
