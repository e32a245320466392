package api

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// EventLog is one audit log entry, in the shape of Airflow's event logs:
// owner did event to target; extra says how.
type EventLog struct {
	EventLogID int64     `json:"event_log_id"`
	When       time.Time `json:"when"`
	Event      string    `json:"event" doc:"the action, e.g. dag.pause, dag_run.trigger, pool.create"`
	Owner      string    `json:"owner" doc:"the user; the admin CLI records cli:<os user>"`
	Target     string    `json:"target" doc:"what changed: a dag_id, dag_id/dag_run_id, pool name, ..."`
	Extra      string    `json:"extra"`
}

// EventLogOf describes an audit log entry.
func EventLogOf(e core.AuditEntry) EventLog {
	return EventLog{EventLogID: e.ID, When: e.When, Event: e.Action, Owner: e.User, Target: e.Target, Extra: e.Detail}
}

// EventLogCollection is a page of event logs.
type EventLogCollection struct {
	EventLogs    []EventLog `json:"event_logs"`
	TotalEntries int        `json:"total_entries"`
}

type listEventLogsInput struct {
	Page
	Cursor
	Event  string `query:"event" doc:"only entries of this event, e.g. dag.pause"`
	Owner  string `query:"owner" doc:"only entries by this user"`
	Target string `query:"target" doc:"only entries about this target"`
}

func (s *server) registerEventLogs() {
	register(s, core.RoleViewer, huma.Operation{
		OperationID: "get_event_logs", Method: http.MethodGet, Path: Prefix + "/eventLogs", Tags: []string{"Event Log"},
		Summary: "List the audit log",
		Description: listDoc("Lists administrative changes made through the REST API and the CLI. "+
			"before_id (the default order) or after_id (with order_by=event_log_id) pages by keyset.", store.AuditLogOrder),
		Errors: []int{http.StatusBadRequest},
	}, s.listEventLogs)
}

func (s *server) listEventLogs(ctx context.Context, in *listEventLogsInput) (*struct{ Body EventLogCollection }, error) {
	p := &store.AuditLogListParams{Action: in.Event, User: in.Owner, Target: in.Target,
		Cursor: in.Cursor.store(), Page: in.Page.store()}
	entries, total, err := listOf(ctx, s, p, s.st.AuditLogList, s.st.AuditLogCount)
	if err != nil {
		return nil, err
	}
	out := make([]EventLog, len(entries))
	for i, e := range entries {
		out[i] = EventLogOf(e)
	}
	return &struct{ Body EventLogCollection }{EventLogCollection{EventLogs: out, TotalEntries: total}}, nil
}
