package core

// TriggerRule decides when a task runs given its upstream tasks' states.
type TriggerRule string

// Trigger rules, as in Airflow.
const (
	AllSuccess              TriggerRule = "all_success"
	AllFailed               TriggerRule = "all_failed"
	AllDone                 TriggerRule = "all_done"
	OneSuccess              TriggerRule = "one_success"
	OneFailed               TriggerRule = "one_failed"
	NoneFailed              TriggerRule = "none_failed"
	NoneFailedMinOneSuccess TriggerRule = "none_failed_min_one_success"
	NoneSkipped             TriggerRule = "none_skipped"
	Always                  TriggerRule = "always"
)

// AllTriggerRules lists the supported rules.
var AllTriggerRules = []TriggerRule{AllSuccess, AllFailed, AllDone, OneSuccess, OneFailed,
	NoneFailed, NoneFailedMinOneSuccess, NoneSkipped, Always}

// Valid reports whether r is a supported rule ("" means all_success).
func (r TriggerRule) Valid() bool {
	if r == "" {
		return true
	}
	for _, v := range AllTriggerRules {
		if v == r {
			return true
		}
	}
	return false
}

// UpstreamCounts summarizes the states of a task's upstream task instances
// (every map index of a mapped upstream counts once).
type UpstreamCounts struct {
	Total          int
	Success        int
	Failed         int
	UpstreamFailed int
	Skipped        int
	Removed        int
}

// Add counts n upstream instances in state st.
func (c *UpstreamCounts) Add(st TIState, n int) {
	c.Total += n
	switch st {
	case TISuccess:
		c.Success += n
	case TIFailed:
		c.Failed += n
	case TIUpstreamFailed:
		c.UpstreamFailed += n
	case TISkipped:
		c.Skipped += n
	case TIRemoved:
		c.Removed += n
	case TINone, TIScheduled, TIQueued, TIRunning, TIUpForRetry, TIRestarting, TIDeferred:
	}
}

// Done is the number of upstreams in a terminal state.
func (c UpstreamCounts) Done() int {
	return c.Success + c.Failed + c.UpstreamFailed + c.Skipped + c.Removed
}

// Decision is what a trigger rule says about a waiting task.
type Decision int

// Decisions.
const (
	Wait           Decision = iota // not yet decidable
	Run                            // schedule the task
	SkipTask                       // mark it skipped
	UpstreamFailed                 // mark it upstream_failed
)

// Evaluate applies the rule to the upstream counts. A task without upstreams
// always runs. Removed upstreams count as successful, as in Airflow.
func (r TriggerRule) Evaluate(c UpstreamCounts) Decision {
	if c.Total == 0 {
		return Run
	}
	succ := c.Success + c.Removed
	failed := c.Failed + c.UpstreamFailed
	done := c.Done() == c.Total
	switch r {
	case "", AllSuccess:
		switch {
		case failed > 0:
			return UpstreamFailed
		case c.Skipped > 0:
			return SkipTask
		case done:
			return Run
		}
	case AllFailed:
		switch {
		case succ > 0 || c.Skipped > 0:
			return SkipTask
		case done:
			return Run
		}
	case AllDone, Always:
		if r == Always || done {
			return Run
		}
	case OneSuccess:
		switch {
		case succ > 0:
			return Run
		case done && failed > 0:
			return UpstreamFailed
		case done:
			return SkipTask
		}
	case OneFailed:
		switch {
		case failed > 0:
			return Run
		case done:
			return SkipTask
		}
	case NoneFailed:
		switch {
		case failed > 0:
			return UpstreamFailed
		case done:
			return Run
		}
	case NoneFailedMinOneSuccess:
		switch {
		case failed > 0:
			return UpstreamFailed
		case done && succ == 0:
			return SkipTask
		case done:
			return Run
		}
	case NoneSkipped:
		switch {
		case c.Skipped > 0:
			return SkipTask
		case done:
			return Run
		}
	}
	return Wait
}
