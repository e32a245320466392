package objstore_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/objstore"
)

func TestValidateKey(t *testing.T) {
	t.Parallel()
	for _, key := range []string{"a", "a/b/c", ".hidden", "a..b", "..a/b..", "%", "ü/鍵", strings.Repeat("k", objstore.MaxKeyLen)} {
		if err := objstore.ValidateKey(key); err != nil {
			t.Errorf("ValidateKey(%q) = %v, want nil", key, err)
		}
	}
	for key, want := range map[string]string{
		"":         "empty",
		"/a":       `starts with "/"`,
		"a/../b":   `".." segment`,
		"./a":      `"." segment`,
		"a//b":     "empty segment",
		"a/":       `ends with "/"`,
		"a\tb":     "control character",
		"\xc3\x28": "UTF-8",
		strings.Repeat("k", objstore.MaxKeyLen+1): "at most 1024",
	} {
		err := objstore.ValidateKey(key)
		if !errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), want) {
			t.Errorf("ValidateKey(%q) = %v, want core.ErrInvalid saying %q", key, err, want)
		}
	}
}

func TestParseS3URL(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		"AWS_ACCESS_KEY_ID":     "env-key",
		"AWS_SECRET_ACCESS_KEY": "env-secret",
		"AWS_SESSION_TOKEN":     "env-token",
	}
	getenv := func(k string) string { return env[k] }
	noenv := func(string) string { return "" }
	tests := []struct {
		url    string
		getenv func(string) string
		want   objstore.S3Config
	}{{
		url:    "s3://bucket/some/prefix?endpoint=http://127.0.0.1:8333&region=us-east-1",
		getenv: getenv,
		want: objstore.S3Config{Endpoint: "127.0.0.1:8333", Bucket: "bucket", Prefix: "some/prefix/",
			Region: "us-east-1", AccessKey: "env-key", SecretKey: "env-secret", SessionToken: "env-token"},
	}, {
		url:    "s3://KEY:se%2Fcret@my.bucket-1/p/?endpoint=https://minio.internal:9000&path_style=true",
		getenv: getenv,
		want: objstore.S3Config{Endpoint: "minio.internal:9000", Secure: true, Bucket: "my.bucket-1", Prefix: "p/",
			Addressing: objstore.AddressingPath, AccessKey: "KEY", SecretKey: "se/cret"},
	}, {
		url:    "s3://bucket?path_style=false",
		getenv: noenv,
		want: objstore.S3Config{Endpoint: objstore.DefaultS3Endpoint, Secure: true, Bucket: "bucket",
			Addressing: objstore.AddressingVirtualHost},
	}}
	for _, tc := range tests {
		got, err := objstore.ParseS3URLWithEnv(tc.url, tc.getenv)
		if err != nil {
			t.Errorf("ParseS3URL(%q): %v", tc.url, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("ParseS3URL(%q) (-want +got):\n%s", tc.url, diff)
		}
	}
}

// TestOpenRejectsBadURLs checks that every malformed URL is refused with
// core.ErrInvalid, a message naming the fault, and never the secret.
func TestOpenRejectsBadURLs(t *testing.T) {
	t.Parallel()
	for rawURL, want := range map[string]string{
		"":                                    "no scheme",
		"/var/lib/weir":                       "no scheme",
		"gs://bucket":                         `unsupported scheme "gs"`,
		"file:relative/dir":                   "absolute path",
		"file://otherhost/dir":                `names host "otherhost"`,
		"file:///":                            "names no directory",
		"file:///tmp/x?mode=1":                "takes only a path",
		"s3:///prefix":                        "names no bucket",
		"s3://Bad_Bucket":                     "bucket name",
		"s3://ab":                             "bucket name",
		"s3://bucket?endpoint=127.0.0.1:9000": "http:// or https://",
		"s3://bucket?endpoint=ftp://h":        "http:// or https://",
		"s3://bucket?endpoint=http://h/path":  "only scheme://host",
		"s3://bucket?path_style=maybe":        "true or false",
		"s3://bucket?regoin=us-east-1":        `unknown parameter "regoin"`,
		"s3://bucket/a/../b":                  `".." segment`,
		"s3://onlykey@bucket":                 "KEY:SECRET@",
		"s3://key:topsecret@bucket?bogus=1":   "unknown parameter",
		"s3://key:topsecret@bucket/%zz":       "invalid URL escape",
	} {
		_, err := objstore.Open(rawURL)
		if !errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), want) {
			t.Errorf("Open(%q) = %v, want core.ErrInvalid saying %q", rawURL, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "topsecret") {
			t.Errorf("Open(%q) error repeats the secret: %v", rawURL, err)
		}
	}
}

func TestOpenFileCreatesDirectory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir() + "/nested/state"
	s, err := objstore.Open("file://" + dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Put(t.Context(), "k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	if _, err := objstore.Open("file://" + dir + "/k%25obj"); !errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("Open of a file, not a directory = %v, want core.ErrInvalid", err)
	}
}
