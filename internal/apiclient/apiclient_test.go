package apiclient_test

import (
	"errors"
	"testing"

	"github.com/weirflow/weir/internal/apiclient"
	"github.com/weirflow/weir/internal/core"
)

func TestNormalizeURL(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{"http://h:8080", "http://h:8080"},
		{"http://h:8080/", "http://h:8080"},
		{"http://h:8080/api/v2", "http://h:8080"},
		{" https://weir.example.com/api/v2/ ", "https://weir.example.com"},
		{"https://example.com/weir/", "https://example.com/weir"},
		{"https://example.com/weir/api/v2", "https://example.com/weir"},
	} {
		if got, err := apiclient.NormalizeURL(c.in); err != nil || got != c.want {
			t.Errorf("NormalizeURL(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "localhost:8080", "ftp://h", "http://", "http://u:p@h", "http://h/?x=1"} {
		if _, err := apiclient.NormalizeURL(bad); !errors.Is(err, core.ErrInvalid) {
			t.Errorf("NormalizeURL(%q): err %v, want ErrInvalid", bad, err)
		}
	}
}
