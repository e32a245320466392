package secrets

import (
	"net/url"
	"regexp"
	"strings"
)

// Masked replaces a secret wherever Weir shows a value that held one.
const Masked = "***"

// RedactURI is a connection string as Weir shows it (REST, the UI, the
// CLI, `weir config list`, error messages): a URL's password, and the
// values of its query and fragment parameters whose names look secret
// (SensitiveParam: ?password=, ?sslkey=, #token=), become "***"; so do the
// values of such keys in a libpq keyword/value string ("host=db
// password=x"). A URL that does not parse is masked by pattern (its
// user:password@ too). Anything else is returned as it is.
func RedactURI(s string) string {
	if !strings.Contains(s, "://") { // keyword/value text, or a URL without // ("scheme:?token=x")
		return maskParams(keywordSecrets.ReplaceAllString(s, "${1}"+Masked))
	}
	u, err := url.Parse(s)
	if err != nil { // best effort on what does not parse: "a#b" in a password, a bad port
		s = userinfoSecret.ReplaceAllString(s, "${1}"+Masked+"@")
		return maskParams(s)
	}
	if u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), Masked)
			s = strings.Replace(u.String(), url.QueryEscape(Masked), Masked, 1)
		}
	}
	return maskParams(s)
}

// maskParams masks the values of secret-named name=value parameters, as
// a query or fragment holds them (separated by &, ; or #).
func maskParams(s string) string {
	return params.ReplaceAllStringFunc(s, func(m string) string {
		sub := params.FindStringSubmatch(m)
		if !SensitiveParam(sub[2]) {
			return m
		}
		return sub[1] + sub[2] + "=" + Masked
	})
}

// SensitiveParam reports whether a connection string's parameter named
// name holds a secret: a SensitiveName, or any name with key or auth in it
// (sslkey, authSource's neighbours): a path is masked rather than a
// secret shown.
func SensitiveParam(name string) bool {
	n := strings.ToLower(name)
	return SensitiveName(name) || strings.Contains(n, "key") || strings.Contains(n, "auth")
}

var (
	// keywordSecrets matches a secret-named key of a keyword/value string
	// and its value (bare, or single-quoted with \' and \\ escapes),
	// keeping the key and "=" in group 1.
	keywordSecrets = regexp.MustCompile(`(?i)(\b[a-z_]*(?:password|passwd|secret|token|key|auth)[a-z_]*\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s'&]+)`)
	// params matches a name=value parameter after ?, &, ; or #: group 1 the
	// separator, 2 the name.
	params = regexp.MustCompile(`([?&;#])([^=&;#?]+)=([^&;#]*)`)
	// userinfoSecret matches the password of scheme://user:password@ up
	// to the last @ before the path, keeping "scheme://user:" in group 1.
	userinfoSecret = regexp.MustCompile(`^([a-zA-Z][a-zA-Z0-9+.-]*://[^:/@]*:)[^/]*@`)
)
