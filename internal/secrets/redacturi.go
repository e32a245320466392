package secrets

import (
	"net/url"
	"regexp"
	"strings"
)

// Masked replaces a secret wherever Weir shows a value that held one.
const Masked = "***"

// RedactURI is a connection string as Weir shows it (REST, the UI, the
// CLI, `weir config list`, error messages): a URL's password and its query
// parameters whose names look secret (SensitiveParam: ?password=,
// ?sslkey=, ?token=) become "***"; so do the values of such keys in a
// libpq keyword/value string ("host=db password=x"). Anything else is
// returned as it is.
func RedactURI(s string) string {
	if !strings.Contains(s, "://") {
		return keywordSecrets.ReplaceAllString(s, "${1}"+Masked)
	}
	u, err := url.Parse(s)
	if err != nil {
		return keywordSecrets.ReplaceAllString(s, "${1}"+Masked) // best effort on what does not parse
	}
	changed := false
	if u.User != nil {
		if _, has := u.User.Password(); has {
			u.User, changed = url.UserPassword(u.User.Username(), Masked), true
		}
	}
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			if SensitiveParam(k) {
				q.Set(k, Masked)
				changed = true
			}
		}
		if changed {
			u.RawQuery = q.Encode()
		}
	}
	if !changed {
		return s
	}
	// url escapes "*" in userinfo and query values; show the marker plainly.
	return strings.ReplaceAll(u.String(), url.QueryEscape(Masked), Masked)
}

// SensitiveParam reports whether a connection string's parameter named
// name holds a secret: a SensitiveName, or any name with key or auth in it
// (sslkey, authSource's neighbours): a path is masked rather than a
// secret shown.
func SensitiveParam(name string) bool {
	n := strings.ToLower(name)
	return SensitiveName(name) || strings.Contains(n, "key") || strings.Contains(n, "auth")
}

// keywordSecrets matches a secret-named key of a keyword/value string and
// its value (bare, or single-quoted with \' and \\ escapes), keeping the
// key and "=" in group 1.
var keywordSecrets = regexp.MustCompile(`(?i)(\b[a-z_]*(?:password|passwd|secret|token|key|auth)[a-z_]*\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s'&]+)`)
