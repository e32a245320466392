package secrets

import "strings"

// sensitiveNames are name fragments whose values are secrets, as Airflow's
// secrets masker names them.
var sensitiveNames = []string{"access_token", "api_key", "apikey", "authorization", "passphrase", "passwd",
	"password", "private_key", "secret", "token", "credential"}

// separators are the word separators read as "_" in a name.
var separators = strings.NewReplacer("-", "_", " ", "_")

// SensitiveName reports whether a key, kwarg, header or variable named name
// holds a secret (its lower-case form, hyphens and spaces read as
// underscores, contains password, token, api_key, ...: X-Api-Key and
// "Private Key" too, which Airflow's masker misses): such values are shown
// as "***".
func SensitiveName(name string) bool {
	n := separators.Replace(strings.ToLower(name))
	for _, s := range sensitiveNames {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}
