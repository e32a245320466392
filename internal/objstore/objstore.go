// Package objstore is the worker-side object store behind the state
// store's object-store backend (docs/requirements.md#be-2): opaque keys mapped to byte
// values, kept either in an S3-compatible bucket (s3client) or under a
// directory on the local filesystem.
//
// A Store is chosen by URL with Open:
//
//	s3://bucket/prefix?endpoint=http://127.0.0.1:8333&region=us-east-1
//	file:///var/lib/weir/state
//
// Keys are opaque strings chosen by the caller (the state store derives
// them deterministically from scope and key); this package only checks that
// they are safe to use as object names and file paths (see ValidateKey).
// Both implementations behave the same: a Put replaces the whole value
// atomically, Get of an absent key returns core.ErrNotFound, Delete of an
// absent key succeeds, and a key may also be a prefix of other keys ("a"
// and "a/b" can both exist).
package objstore

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/weirflow/weir/internal/core"
)

// Store holds byte values under opaque keys. Implementations are safe for
// concurrent use.
type Store interface {
	// Put stores data under key, replacing any previous value atomically:
	// a reader sees the old value or the new one, never a mix or a part.
	Put(ctx context.Context, key string, data []byte) error
	// Get returns the value under key, or an error wrapping
	// core.ErrNotFound when there is none.
	Get(ctx context.Context, key string) ([]byte, error)
	// Delete removes the value under key; deleting an absent key is not an
	// error.
	Delete(ctx context.Context, key string) error
	// List returns every key that starts with prefix (a plain string
	// prefix, as in S3: "a/b" matches "a/b/c" and "a/bc"), sorted
	// bytewise. An empty prefix lists every key.
	List(ctx context.Context, prefix string) ([]string, error)
}

// MaxKeyLen is the longest key accepted, in bytes (S3's limit on object
// names; the store's own prefix counts towards it on S3).
const MaxKeyLen = 1024

// ValidateKey reports whether key can name an object: non-empty, at most
// MaxKeyLen bytes of valid UTF-8 without control characters, not starting
// or ending with "/", and with no empty, "." or ".." segment between
// slashes. The error wraps core.ErrInvalid and says what is allowed.
func ValidateKey(key string) error {
	if key == "" {
		return fmt.Errorf("%w: object key is empty", core.ErrInvalid)
	}
	if err := validatePath(key); err != nil {
		return fmt.Errorf("%w: object key %q %s", core.ErrInvalid, key, err.Error())
	}
	if strings.HasSuffix(key, "/") {
		return fmt.Errorf("%w: object key %q ends with \"/\"; a key names an object, not a folder", core.ErrInvalid, key)
	}
	return nil
}

// ValidatePrefix reports whether prefix may be passed to List: empty, or a
// string that could begin a valid key (a trailing "/" is allowed).
func ValidatePrefix(prefix string) error {
	if prefix == "" {
		return nil
	}
	if err := validatePath(prefix); err != nil {
		return fmt.Errorf("%w: list prefix %q %s", core.ErrInvalid, prefix, err.Error())
	}
	return nil
}

// keyRuleError is a reason a key or prefix is refused; its text completes
// a sentence starting with the key.
type keyRuleError string

func (e keyRuleError) Error() string { return string(e) }

// validatePath checks the rules keys and prefixes share; a final empty
// segment (a trailing "/") is left to the caller.
func validatePath(s string) error {
	switch {
	case len(s) > MaxKeyLen:
		return keyRuleError(fmt.Sprintf("is %d bytes long; at most %d are allowed", len(s), MaxKeyLen))
	case !utf8.ValidString(s):
		return keyRuleError("is not valid UTF-8")
	case strings.HasPrefix(s, "/"):
		return keyRuleError("starts with \"/\"; keys are relative")
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return keyRuleError(fmt.Sprintf("contains control character %U", r))
		}
	}
	segs := strings.Split(s, "/")
	for i, seg := range segs {
		last := i == len(segs)-1
		switch {
		case seg == "" && !last:
			return keyRuleError("contains an empty segment (\"//\")")
		case seg == "." || seg == "..":
			return keyRuleError(fmt.Sprintf("contains a %q segment; keys may not walk the path", seg))
		}
	}
	return nil
}

// Open returns the Store a URL names:
//
//   - file:///abs/dir keeps each object as a file under dir (created if
//     missing); see NewFS.
//   - s3://bucket[/prefix][?endpoint=URL&region=R&path_style=true|false]
//     keeps objects in an S3-compatible bucket; credentials come from the
//     URL's user info (s3://KEY:SECRET@bucket) or else from the environment
//     variables AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and
//     AWS_SESSION_TOKEN, and are anonymous when neither is set. See
//     ParseS3URL and NewS3.
//
// Open does not contact an S3 server; the first operation does.
func Open(rawURL string) (Store, error) {
	open, err := opener(rawURL)
	if err != nil {
		return nil, err
	}
	return open()
}

// CheckURL reports whether Open accepts rawURL, with the same error, but
// creates no directory: for validating configuration at start.
func CheckURL(rawURL string) error {
	_, err := opener(rawURL)
	return err
}

// opener reads rawURL and returns the function that opens its store.
func opener(rawURL string) (func() (Store, error), error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		// url.Parse quotes the input in its error; strip it in case it
		// holds a secret.
		if uerr, ok := errors.AsType[*url.Error](err); ok {
			err = uerr.Err
		}
		return nil, fmt.Errorf("%w: object store URL: %w (want file:///path or s3://bucket/prefix)", core.ErrInvalid, err)
	}
	switch u.Scheme {
	case "file":
		dir, err := fileURLPath(u)
		if err != nil {
			return nil, err
		}
		return func() (Store, error) { return NewFS(dir) }, nil
	case "s3":
		cfg, err := ParseS3URL(rawURL)
		if err != nil {
			return nil, err
		}
		return func() (Store, error) { return NewS3(cfg) }, nil
	case "":
		return nil, fmt.Errorf("%w: object store URL %q has no scheme; use file:///absolute/path or s3://bucket/prefix",
			core.ErrInvalid, u.Redacted())
	default:
		return nil, fmt.Errorf("%w: object store URL %q has unsupported scheme %q; use file:// or s3://",
			core.ErrInvalid, u.Redacted(), u.Scheme)
	}
}

// fileURLPath returns the directory a file:// URL names.
func fileURLPath(u *url.URL) (string, error) {
	switch {
	case u.Opaque != "":
		return "", fmt.Errorf("%w: object store URL %q: a file URL needs an absolute path, as in file:///var/lib/weir/state",
			core.ErrInvalid, u.Redacted())
	case u.Host != "" && u.Host != "localhost":
		return "", fmt.Errorf("%w: object store URL %q names host %q; file URLs must be local (file:///path)",
			core.ErrInvalid, u.Redacted(), u.Host)
	case u.User != nil || u.RawQuery != "" || u.Fragment != "":
		return "", fmt.Errorf("%w: object store URL %q: a file URL takes only a path", core.ErrInvalid, u.Redacted())
	case u.Path == "" || u.Path == "/":
		return "", fmt.Errorf("%w: object store URL %q names no directory", core.ErrInvalid, u.Redacted())
	}
	return u.Path, nil
}
