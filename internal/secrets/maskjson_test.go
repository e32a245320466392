package secrets_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/secrets"
)

// MaskJSON hides the values of keys that name a secret, at any depth, and
// URLs' passwords, and keeps the rest.
func TestMaskJSONHidesSecrets(t *testing.T) {
	t.Parallel()
	in := json.RawMessage(`{"url":"https://bob:s3cret@example.com/x","headers":{"Authorization":"Bearer abc","Accept":"json"},` +
		`"api_key":"k1","nested":[{"password":"p"}],"path":"/data"}`)
	got := string(secrets.MaskJSON(in))
	for _, secret := range []string{"s3cret", "Bearer abc", "k1", `"p"`} {
		if strings.Contains(got, secret) {
			t.Errorf("masked kwargs %s still show %s", got, secret)
		}
	}
	for _, kept := range []string{"bob", "example.com", `"Accept":"json"`, `"path":"/data"`} {
		if !strings.Contains(got, kept) {
			t.Errorf("masked kwargs %s lost %s", got, kept)
		}
	}
}
