package objstore_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/objstore"
)

// A setting naming a store may be a URL or an absolute folder path; a
// relative path or another scheme is refused saying what is allowed, and
// credentials never appear in the refusal.
func TestLocation(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ raw, want, err string }{
		{"/mnt/weir-logs/", "file:///mnt/weir-logs", ""},
		{"file:///mnt/weir-logs", "file:///mnt/weir-logs", ""},
		{"s3://weir-logs/prod?endpoint=http://127.0.0.1:8333", "s3://weir-logs/prod?endpoint=http://127.0.0.1:8333", ""},
		{"logs/shared", "", "neither an s3://bucket/prefix URL nor an absolute path"},
		{"gs://KEY:SECRET@b/p", "", "neither"},
		{"s3://", "", "bucket"},
	} {
		got, err := objstore.Location(c.raw)
		switch {
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("Location(%q) = %q, %v; want %q", c.raw, got, err, c.want)
		case c.err != "" && (!errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), c.err) || strings.Contains(err.Error(), "SECRET")):
			t.Errorf("Location(%q) error = %v; want one saying %q, without the secret", c.raw, err, c.err)
		}
	}
	if got := objstore.Redact("s3://KEY:SECRET@weir-logs/prod?endpoint=x"); got != "s3://weir-logs/prod?endpoint=x" {
		t.Errorf("Redact = %q", got)
	}
}
