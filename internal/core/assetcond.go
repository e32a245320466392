package core

import "strings"

// AssetCondition is a conditional asset schedule (Airflow's `(a | b) & c`):
// a leaf names an asset or alias (Ref), or it combines conditions: All of
// them (&) or Any of them (|), nested to any depth. Exactly one of Ref, All
// and Any is set.
type AssetCondition struct {
	Ref *AssetRef        `json:"ref,omitempty"`
	All []AssetCondition `json:"all,omitempty"`
	Any []AssetCondition `json:"any,omitempty"`
}

// Met evaluates the condition against what has queued events: has reports
// whether a leaf's asset (or an asset its alias resolves to) has an event
// queued for the DAG. An empty All is met and an empty Any is not, as in
// logic; the loaders refuse both.
func (c *AssetCondition) Met(has func(AssetRef) bool) bool {
	switch {
	case c.Ref != nil:
		return has(*c.Ref)
	case c.Any != nil:
		for i := range c.Any {
			if c.Any[i].Met(has) {
				return true
			}
		}
		return false
	}
	for i := range c.All {
		if !c.All[i].Met(has) {
			return false
		}
	}
	return true
}

// Refs returns the condition's leaves in order (an asset or alias named
// twice appears twice).
func (c *AssetCondition) Refs() []AssetRef {
	if c.Ref != nil {
		return []AssetRef{*c.Ref}
	}
	var out []AssetRef
	for _, sub := range append(append([]AssetCondition{}, c.All...), c.Any...) {
		out = append(out, sub.Refs()...)
	}
	return out
}

// String writes the condition as Airflow does: `(a | b) & alias:c`.
func (c *AssetCondition) String() string {
	if c.Ref != nil {
		return c.Ref.String()
	}
	op, subs := " & ", c.All
	if c.Any != nil {
		op, subs = " | ", c.Any
	}
	parts := make([]string, len(subs))
	for i := range subs {
		parts[i] = subs[i].String()
		if subs[i].Ref == nil {
			parts[i] = "(" + parts[i] + ")"
		}
	}
	return strings.Join(parts, op)
}

// AssetRunMode says how an asset-scheduled DAG turns its queued events into
// runs (DAG.AssetRuns).
type AssetRunMode string

// The modes of DAG.AssetRuns.
const (
	// AssetRunsCoalesce (the default, also "") makes one run of every
	// event queued since the DAG's last asset-triggered run.
	AssetRunsCoalesce AssetRunMode = "coalesce"
	// AssetRunsPerPartition makes one run per partition key: the run for
	// key k consumes the queued events with key k once they meet the
	// schedule on their own, and carries k as its partition_key. Events
	// without a key form one group of their own.
	AssetRunsPerPartition AssetRunMode = "per_partition"
	// AssetRunsPerEvent makes one run per queued event, carrying the
	// event's partition key; the schedule must be one a single event can
	// meet.
	AssetRunsPerEvent AssetRunMode = "per_event"
)

// Partitioned reports whether m makes a run per partition or per event.
func (m AssetRunMode) Partitioned() bool {
	return m == AssetRunsPerPartition || m == AssetRunsPerEvent
}

// Valid reports whether m is a known mode ("" is the default).
func (m AssetRunMode) Valid() bool {
	return m == "" || m == AssetRunsCoalesce || m.Partitioned()
}

// SingleEventMeets reports whether one event of a single asset can meet the
// schedule: a reference, or an any-of with such a member (an all-of needs
// one of each of its members). refs is the plain schedule's list, used when
// c is nil.
func SingleEventMeets(c *AssetCondition, refs []AssetRef) bool {
	if c == nil {
		return len(refs) == 1
	}
	for _, r := range c.Refs() {
		if c.Met(func(x AssetRef) bool { return x == r }) {
			return true
		}
	}
	return false
}
