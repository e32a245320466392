package objstore

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/weirflow/weir/internal/core"
)

// Location returns the store URL a setting names: an s3:// or file:// URL
// as Open takes it, or an absolute path of a (shared) folder as a file://
// URL. Anything else is an error wrapping core.ErrInvalid that says what
// is allowed. Like CheckURL it opens nothing.
func Location(raw string) (string, error) {
	u := raw
	switch {
	case filepath.IsAbs(raw):
		u = "file://" + filepath.Clean(raw)
	case !strings.HasPrefix(raw, "s3://") && !strings.HasPrefix(raw, "file://"):
		return "", fmt.Errorf("%w: %q is neither an s3://bucket/prefix URL nor an absolute path of a folder",
			core.ErrInvalid, Redact(raw))
	}
	if err := CheckURL(u); err != nil {
		return "", err
	}
	return u, nil
}

// Redact returns an object store URL without the credentials an s3:// URL
// may carry as user info.
func Redact(u string) string {
	rest, ok := strings.CutPrefix(u, "s3://")
	if !ok {
		return u
	}
	if at := strings.Index(rest, "@"); at >= 0 && at < strings.IndexAny(rest+"/", "/?") {
		rest = rest[at+1:]
	}
	return "s3://" + rest
}
