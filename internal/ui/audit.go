package ui

import (
	"net/http"
	"net/url"
	"strconv"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// auditPageSize is how many audit entries one page shows.
const auditPageSize = 50

// auditData is the audit log page's model.
type auditData struct {
	Action, User, Target string
	Entries              []core.AuditEntry
	Total                int
	Older                string // the next page's URL (keyset: before the last id shown); "" at the end
}

// auditPage lists the audit log, newest first, filtered by action, user
// and target, paging by keyset (?before_id=) as the REST API's event logs.
func (u *UI) auditPage(w http.ResponseWriter, r *http.Request, req *request) {
	q := r.URL.Query()
	d := auditData{Action: q.Get("action"), User: q.Get("user"), Target: q.Get("target")}
	p := &store.AuditLogListParams{Action: d.Action, User: d.User, Target: d.Target, Page: store.Page{Limit: auditPageSize}}
	if s := q.Get("before_id"); s != "" {
		id, err := strconv.ParseInt(s, 10, 64)
		if err != nil || id < 1 {
			u.fail(w, r, req, http.StatusBadRequest, "before_id must be a positive whole number, not "+strconv.Quote(s)+".")
			return
		}
		p.BeforeID = id
	}
	var err error
	if d.Entries, d.Total, err = store.List(r.Context(), p, u.st.AuditLogList, u.st.AuditLogCount); err != nil {
		u.failErr(w, r, req, err)
		return
	}
	if n := len(d.Entries); n == auditPageSize {
		next := url.Values{"before_id": {strconv.FormatInt(d.Entries[n-1].ID, 10)}}
		for _, k := range []string{"action", "user", "target"} {
			if v := q.Get(k); v != "" {
				next.Set(k, v)
			}
		}
		d.Older = "/audit?" + next.Encode()
	}
	u.render(w, r, http.StatusOK, "audit", req, "Audit log", d)
}
