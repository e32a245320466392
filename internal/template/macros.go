package template

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/nikolalohinski/gonja/v2/exec"
)

// moreMacros are the macros of Airflow's airflow.macros beyond ds_add and
// ds_format that a Jinja template can call (docs/templates.md#macros):
// macros.random(), macros.uuid.uuid4(), macros.time.time() and
// macros.datetime_diff_for_humans(dt, since=None). now is the render's
// clock; keep records a macro's error as the render's cause.
func moreMacros(now func() time.Time, keep func(error) error) map[string]any {
	return map[string]any{
		"random": rand.Float64, //nolint:gosec // G404: Airflow's macros.random, not for secrets
		"uuid":   map[string]any{"uuid4": func() string { return uuid.NewString() }},
		"time":   map[string]any{"time": func() float64 { return float64(now().UnixMicro()) / 1e6 }},
		"datetime_diff_for_humans": func(args *exec.VarArgs) (string, error) {
			v, err := diffForHumans(args, now())
			return v, keep(err)
		},
	}
}

// diffForHumans is macros.datetime_diff_for_humans(dt, since=None): how
// far dt is from since (or from now), as pendulum words it: "3 days ago",
// "in 2 hours", or with since "5 minutes after" / "1 week before".
func diffForHumans(args *exec.VarArgs, now time.Time) (string, error) {
	var dt, since *exec.Value
	for name, v := range args.KwArgs {
		switch name {
		case "dt":
			dt = v
		case "since":
			since = v
		default:
			return "", fmt.Errorf("macros.datetime_diff_for_humans: unsupported argument %s (dt and since are)", name)
		}
	}
	for _, v := range args.Args {
		switch {
		case dt == nil:
			dt = v
		case since == nil:
			since = v
		default:
			return "", fmt.Errorf("macros.datetime_diff_for_humans takes dt and since")
		}
	}
	t, ok := timeOf(dt)
	if !ok {
		return "", fmt.Errorf("macros.datetime_diff_for_humans: dt must be a timestamp (logical_date, data_interval_start, ...)")
	}
	other, relative := now, true
	if since != nil && !since.IsNil() {
		if other, ok = timeOf(since); !ok {
			return "", fmt.Errorf("macros.datetime_diff_for_humans: since must be a timestamp or none")
		}
		relative = false
	}
	span := humanSpan(t.Sub(other).Abs())
	switch {
	case relative && t.Before(other):
		return span + " ago", nil
	case relative:
		return "in " + span, nil
	case t.Before(other):
		return span + " before", nil
	}
	return span + " after", nil
}

// timeOf is v's time, when v is a timestamp.
func timeOf(v *exec.Value) (time.Time, bool) {
	if v == nil {
		return time.Time{}, false
	}
	t, ok := v.Interface().(Time)
	return t.Time, ok
}

// spanUnits are the units humanSpan counts in, largest first.
var spanUnits = []struct {
	name string
	d    time.Duration
}{
	{"year", 365 * 24 * time.Hour}, {"month", 30 * 24 * time.Hour}, {"week", 7 * 24 * time.Hour},
	{"day", 24 * time.Hour}, {"hour", time.Hour}, {"minute", time.Minute}, {"second", time.Second},
}

// humanSpan words d in its largest whole unit: "1 day", "3 hours", and
// under 10 seconds "a few seconds".
func humanSpan(d time.Duration) string {
	if d < 10*time.Second {
		return "a few seconds"
	}
	for _, u := range spanUnits {
		if n := int(d / u.d); n >= 1 {
			if n == 1 {
				return "1 " + u.name
			}
			return fmt.Sprintf("%d %ss", n, u.name)
		}
	}
	return "a few seconds"
}

// shiftUnits are the keyword arguments of a timestamp's add() and
// subtract(), as pendulum's.
var shiftUnits = []string{"years", "months", "weeks", "days", "hours", "minutes", "seconds"}

// shift is a timestamp's add(**units) (sign 1) or subtract(**units) (sign
// -1), as pendulum's: {{ logical_date.add(days=1) | ds }}. Its errors
// hold no ": " (a render error keeps only what follows the last one).
func shift(t Time, sign int, args *exec.VarArgs) (Time, error) {
	name := map[int]string{1: "add", -1: "subtract"}[sign]
	if len(args.Args) > 0 {
		return Time{}, fmt.Errorf("%s takes keyword arguments only (%s), as in logical_date.%s(days=1)", name, strings.Join(shiftUnits, ", "), name)
	}
	n := map[string]int{}
	for unit, v := range args.KwArgs {
		if !slices.Contains(shiftUnits, unit) {
			return Time{}, fmt.Errorf("%s has no unit %s (%s are)", name, unit, strings.Join(shiftUnits, ", "))
		}
		if !v.IsInteger() {
			return Time{}, fmt.Errorf("%s takes a whole number of %s, not %s", name, unit, v.String())
		}
		n[unit] = sign * v.Integer()
	}
	out := t.AddDate(n["years"], n["months"], 7*n["weeks"]+n["days"])
	out = out.Add(time.Duration(n["hours"])*time.Hour + time.Duration(n["minutes"])*time.Minute + time.Duration(n["seconds"])*time.Second)
	return Time{out}, nil
}
