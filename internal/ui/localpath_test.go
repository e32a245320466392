package ui

import "testing"

// TestLocalPathStaysOnSite: a form's "back" redirect leaves the site for no
// input a browser would read as another host.
func TestLocalPathStaysOnSite(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"/dags/hello?x=1": "/dags/hello?x=1", "//evil.example": "", "/\\evil.example": "", "/\t/evil.example": "",
		"/\n/evil.example": "", "https://evil.example/": "", "dags": "", "/a\\b": "",
	} {
		if got := localPath(in); got != want {
			t.Errorf("localPath(%q) = %q, want %q", in, got, want)
		}
	}
}
