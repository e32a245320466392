package template

import (
	"github.com/nikolalohinski/gonja/v2/exec"
)

// timeAttrs are the attributes a timestamp has in a Jinja template, a
// subset of pendulum's DateTime (Airflow's): {{ logical_date.year }},
// {{ data_interval_end.strftime('%Y/%m') }}, {{ logical_date.isoformat() }},
// {{ logical_date.add(days=1) | ds }}.
var timeAttrs = map[string]func(t Time) any{
	"year":        func(t Time) any { return t.Year() },
	"month":       func(t Time) any { return int(t.Month()) },
	"day":         func(t Time) any { return t.Day() },
	"hour":        func(t Time) any { return t.Hour() },
	"minute":      func(t Time) any { return t.Minute() },
	"second":      func(t Time) any { return t.Second() },
	"microsecond": func(t Time) any { return t.Nanosecond() / 1000 },
	"isoformat":   func(t Time) any { return t.String },
	"timestamp":   func(t Time) any { return func() float64 { return float64(t.UnixMicro()) / 1e6 } },
	"date":        func(t Time) any { return func() string { return t.Format("2006-01-02") } },
	"add":         func(t Time) any { return func(args *exec.VarArgs) (Time, error) { return shift(t, 1, args) } },
	"subtract":    func(t Time) any { return func(args *exec.VarArgs) (Time, error) { return shift(t, -1, args) } },
	"strftime": func(t Time) any {
		return func(format string) (string, error) {
			layout, err := goLayout(format)
			if err != nil {
				return "", err
			}
			return t.Format(layout), nil
		}
	},
}

// GetAttribute gives a Jinja template t's attributes (timeAttrs).
func (t Time) GetAttribute(name string) (*exec.Value, bool) {
	attr, ok := timeAttrs[name]
	if !ok {
		return exec.AsValue(nil), false
	}
	return exec.AsValue(attr(t)), true
}
