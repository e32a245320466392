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

// Redact returns a store URL without the credentials it may carry as user
// info (s3://KEY:SECRET@bucket/prefix).
func Redact(u string) string {
	i := strings.Index(u, "://")
	if i < 0 {
		return u
	}
	scheme, rest := u[:i+3], u[i+3:]
	if at := strings.Index(rest, "@"); at >= 0 && at < strings.IndexAny(rest+"/", "/?") {
		rest = rest[at+1:]
	}
	return scheme + rest
}
