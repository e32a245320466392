package execclient

import (
	"context"
	"net/http"
	"net/url"
	"time"
)

// PrevSuccessfulDagRun is the run the prev_*_success template names read
// (GET /task-instances/{id}/previous-successful-dagrun, as Airflow's):
// every field null when the try's run has none.
type PrevSuccessfulDagRun struct {
	DataIntervalStart *time.Time `json:"data_interval_start"`
	DataIntervalEnd   *time.Time `json:"data_interval_end"`
	StartDate         *time.Time `json:"start_date"`
	EndDate           *time.Time `json:"end_date"`
}

// PreviousSuccessfulDagRun returns the successful run of try tiID's DAG
// before its run (by logical date).
func (c *Client) PreviousSuccessfulDagRun(ctx context.Context, tiID string) (*PrevSuccessfulDagRun, error) {
	var out PrevSuccessfulDagRun
	if err := c.doJSON(ctx, http.MethodGet, "/task-instances/"+url.PathEscape(tiID)+"/previous-successful-dagrun", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
