package secrets

import "testing"

func TestRedactURI(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{"postgres://u:pw@h/db", "postgres://u:***@h/db"},
		{"postgres://u@h:5432/db?sslmode=disable&password=S3CRET", "postgres://u@h:5432/db?sslmode=disable&password=***"},
		{"mysql://u@db/x?Password=p&sslkey=/etc/k.pem", "mysql://u@db/x?Password=***&sslkey=***"},
		{"http://u:p@host/path?api_token=t", "http://u:***@host/path?api_token=***"},
		{"host=127.0.0.1 user=postgres password=KV1 dbname=postgres", "host=127.0.0.1 user=postgres password=*** dbname=postgres"},
		{"host=db password='a b\\' c' sslmode=require", "host=db password=*** sslmode=require"},
		{"postgres://u@h/db?sslmode=disable", "postgres://u@h/db?sslmode=disable"},
		{"sqlite:////var/lib/weir/weir.db", "sqlite:////var/lib/weir/weir.db"},
		{"not a uri", "not a uri"},
		{"postgres://user:pa#ss@host/db", "postgres://user:***@host/db"},
		{"postgres://user:pw@host:badport/db", "postgres://user:***@host:badport/db"},
		{"postgres://u@h/db?a=1;password=abc", "postgres://u@h/db?a=1;password=***"},
		{"https://h/cb#access_token=abc&state=x", "https://h/cb#access_token=***&state=x"},
		{"google-cloud-platform:?credentials=C&passphrase=P&project=p", "google-cloud-platform:?credentials=***&passphrase=***&project=p"},
	} {
		if got := RedactURI(c.in); got != c.want {
			t.Errorf("RedactURI(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
