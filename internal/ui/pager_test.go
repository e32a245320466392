package ui

import (
	"net/url"
	"testing"
)

// The pager names the entries shown and links its neighbours; a page past
// the end (a typed offset) shows none and links back to the last page.
func TestPager(t *testing.T) {
	t.Parallel()
	u, _ := url.Parse("/dags?q=x")
	for _, tc := range []struct {
		offset, n, total int
		want             pager
	}{
		{0, 50, 93, pager{From: 1, To: 50, Total: 93, Next: "/dags?offset=50&q=x"}},
		{50, 43, 93, pager{From: 51, To: 93, Total: 93, Prev: "/dags?q=x"}},
		{1000, 0, 93, pager{Total: 93, Prev: "/dags?offset=50&q=x"}},
		{0, 0, 0, pager{}},
	} {
		if got := newPager(u, "offset", tc.offset, 50, tc.n, tc.total); got != tc.want {
			t.Errorf("offset %d, %d of %d: %+v, want %+v", tc.offset, tc.n, tc.total, got, tc.want)
		}
	}
}
