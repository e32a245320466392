package listwatch

import (
	"maps"
	"path"
	"regexp"
	"slices"
	"time"

	"github.com/weirflow/weir/internal/trigger"
)

// DefaultMaxItems is max_items when not given.
const DefaultMaxItems = 1000

// Kwargs are the kwargs every listing watcher takes; a type embeds them in
// its own kwargs struct and calls Options.
type Kwargs struct {
	Route        map[string]string `json:"route"`
	MaxItems     *int              `json:"max_items"`
	MinAge       *string           `json:"min_age"`
	PollInterval *string           `json:"poll_interval"`
	PartitionKey *string           `json:"partition_key"`
}

// Options validates the kwargs and returns the options (min_age minAge
// when not given) and the poll interval; an error names the kwarg at fault.
func (k *Kwargs) Options(minAge time.Duration) (Options, time.Duration, error) {
	opt := Options{Route: k.Route, MaxItems: DefaultMaxItems, MinAge: minAge}
	if k.Route != nil && len(k.Route) == 0 {
		return opt, 0, trigger.Invalid("route", "must map at least one asset name to a pattern (leave it out to give every watched asset every item)")
	}
	for _, name := range slices.Sorted(maps.Keys(k.Route)) {
		pattern := k.Route[name]
		if name == "" {
			return opt, 0, trigger.Invalid("route", "holds an empty asset name")
		}
		if _, err := path.Match(pattern, ""); err != nil || pattern == "" {
			return opt, 0, trigger.Invalid("route", "holds %q for asset %q, which is not a valid glob (* ? [a-z], '/' matched only by '/')", pattern, name)
		}
	}
	if k.MaxItems != nil {
		if *k.MaxItems < 1 || *k.MaxItems > MaxEventsPerPoll {
			return opt, 0, trigger.Invalid("max_items", "must be from 1 to %d, got %d", MaxEventsPerPoll, *k.MaxItems)
		}
		opt.MaxItems = *k.MaxItems
	}
	if k.MinAge != nil {
		d, err := time.ParseDuration(*k.MinAge)
		if err != nil || d < 0 {
			return opt, 0, trigger.Invalid("min_age", "must be a duration of 0 or more such as \"10s\", got %q", *k.MinAge)
		}
		opt.MinAge = d
	}
	if k.PartitionKey != nil {
		re, err := regexp.Compile(*k.PartitionKey)
		if err != nil || *k.PartitionKey == "" {
			return opt, 0, trigger.Invalid("partition_key", "must be a regular expression whose first group (or whole match) in an item's key is its partition key, got %q", *k.PartitionKey)
		}
		opt.PartitionKey = re
	}
	interval, err := trigger.Interval("poll_interval", k.PollInterval, trigger.DefaultPollInterval)
	return opt, interval, err
}
