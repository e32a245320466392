package template

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Environment variables that carry a run's trigger data and metadata to a
// task process (docs/dag-files.md#trigger-data-in-shell-commands). A shell
// command reads "$WEIR_PARAM_NAME" instead of templating {{ .params.name }}
// into its text, so no value can become shell syntax.
const (
	EnvConf              = "WEIR_CONF"         // the run's conf, a JSON object
	EnvParams            = "WEIR_PARAMS"       // the DAG's params overridden by conf, a JSON object
	EnvParamPrefix       = "WEIR_PARAM_"       // + the param's name in upper case: one variable per param
	EnvRunType           = "WEIR_RUN_TYPE"     // manual, scheduled, asset_triggered, backfill
	EnvLogicalDate       = "WEIR_LOGICAL_DATE" // {{ .ts }}
	EnvDS                = "WEIR_DS"           // {{ .ds }}
	EnvDataIntervalStart = "WEIR_DATA_INTERVAL_START"
	EnvDataIntervalEnd   = "WEIR_DATA_INTERVAL_END"
	EnvPartitionKey      = "WEIR_PARTITION_KEY" // {{ .partition_key }}: the run's partition, "" for none
	// EnvAssetEvents is .triggering_asset_events as a JSON list (left out
	// over 128 KiB: read the run's events through the REST API then).
	EnvAssetEvents = "WEIR_TRIGGERING_ASSET_EVENTS"
	// EnvAssetEventsTotal is .triggering_asset_events_total: how many
	// events the run consumed (more than the list holds when it was cut).
	EnvAssetEventsTotal = "WEIR_TRIGGERING_ASSET_EVENTS_TOTAL"
)

// maxEnvValue is the longest value Env passes: Linux refuses a single
// environment string over 128 KiB (MAX_ARG_STRLEN), which would fail the
// whole task.
const maxEnvValue = 128<<10 - 256

// Env returns the run's trigger data and metadata from a template context
// (Context) as KEY=value environment variables. A param's variable is
// WEIR_PARAM_ and its name in upper case with every character other than
// A-Z, 0-9 and _ replaced by _; a string value is passed as it is, any
// other value as JSON. A param whose variable name another param also
// maps to, a value holding a NUL byte, and a value over 128 KiB are left
// out (WEIR_PARAMS still has every param that fits).
func Env(ctx map[string]any) []string {
	var env []string
	add := func(k, v string) {
		if len(v) <= maxEnvValue && !strings.ContainsRune(v, 0) {
			env = append(env, k+"="+v)
		}
	}
	params, _ := ctx["params"].(map[string]any)
	add(EnvConf, jsonText(ctx["conf"]))
	add(EnvParams, jsonText(params))
	if run, ok := ctx["dag_run"].(map[string]any); ok {
		add(EnvRunType, fmt.Sprint(run["run_type"]))
	}
	add(EnvLogicalDate, fmt.Sprint(ctx["ts"]))
	add(EnvDS, fmt.Sprint(ctx["ds"]))
	add(EnvDataIntervalStart, fmt.Sprint(ctx["data_interval_start"]))
	add(EnvDataIntervalEnd, fmt.Sprint(ctx["data_interval_end"]))
	add(EnvPartitionKey, fmt.Sprint(ctx["partition_key"]))
	add(EnvAssetEvents, jsonText(ctx["triggering_asset_events"]))
	total, _ := ctx["triggering_asset_events_total"].(int)
	add(EnvAssetEventsTotal, fmt.Sprint(total))

	names := map[string][]string{} // variable → the params that map to it
	for k := range params {
		names[ParamEnvName(k)] = append(names[ParamEnvName(k)], k)
	}
	for _, name := range slices.Sorted(maps.Keys(names)) {
		if keys := names[name]; len(keys) == 1 {
			v, ok := params[keys[0]].(string)
			if !ok {
				v = jsonText(params[keys[0]])
			}
			add(name, v)
		}
	}
	return env
}

// ParamEnvName is the environment variable that carries param name.
func ParamEnvName(name string) string {
	return EnvParamPrefix + strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return r - 'a' + 'A'
		case r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_':
			return r
		}
		return '_'
	}, name)
}

// jsonText is v as JSON, or null when v cannot be encoded.
func jsonText(v any) string {
	s, err := toJSON(v)
	if err != nil {
		return "null"
	}
	return s
}
