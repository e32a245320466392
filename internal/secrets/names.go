package secrets

import "strings"

// sensitiveNames are name fragments whose values are secrets, as Airflow's
// secrets masker names them.
var sensitiveNames = []string{"access_token", "api_key", "apikey", "authorization", "passphrase", "passwd",
	"password", "private_key", "secret", "token", "credential"}

// SensitiveName reports whether a key, kwarg or variable named name holds a
// secret (its lower-case form contains password, token, api_key, ...):
// such values are shown as "***".
func SensitiveName(name string) bool {
	n := strings.ToLower(name)
	for _, s := range sensitiveNames {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}
