package ui

import (
	"net/url"
	"strconv"
)

// pager is the "1–50 of 312, previous / next" line under a list.
type pager struct {
	From, To, Total int
	Prev, Next      string // URLs; "" when there is no such page
}

// newPager describes the page at offset (n entries shown of total) and
// links to its neighbours through the query parameter param ("offset"),
// keeping u's other query parameters.
func newPager(u *url.URL, param string, offset, size, n, total int) pager {
	p := pager{From: offset + 1, To: offset + n, Total: total}
	if n == 0 {
		p.From, p.To = 0, 0
	}
	link := func(off int) string {
		q := u.Query()
		if off == 0 {
			q.Del(param)
		} else {
			q.Set(param, strconv.Itoa(off))
		}
		return u.Path + "?" + q.Encode()
	}
	switch {
	case offset >= total && total > 0: // past the end: back to the last page
		p.Prev = link((total - 1) / size * size)
	case offset > 0:
		p.Prev = link(max(0, offset-size))
	}
	if offset+n < total {
		p.Next = link(offset + size)
	}
	return p
}
