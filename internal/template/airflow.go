package template

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nikolalohinski/gonja/v2/exec"
)

// airflowFilters are the filters Airflow adds to Jinja's, and shquote:
// {{ logical_date | ds }}, {{ params.name | shquote }}.
var airflowFilters = map[string]exec.FilterFunction{
	"ds":                timeFilter("ds", "2006-01-02"),
	"ds_nodash":         timeFilter("ds_nodash", "20060102"),
	"ts":                timeFilter("ts", "2006-01-02T15:04:05-07:00"),
	"ts_nodash":         timeFilter("ts_nodash", "20060102T150405"),
	"ts_nodash_with_tz": timeFilter("ts_nodash_with_tz", "20060102T150405-0700"),
	quoteFunc: func(_ *exec.Evaluator, in *exec.Value, _ *exec.VarArgs) *exec.Value {
		if in.IsError() {
			return in
		}
		s, err := ShellQuote(in.Interface())
		if err != nil {
			return exec.AsValue(err)
		}
		return exec.AsValue(s)
	},
}

// timeFilter formats a timestamp with layout, as Airflow's filter name does.
func timeFilter(name, layout string) exec.FilterFunction {
	return func(_ *exec.Evaluator, in *exec.Value, _ *exec.VarArgs) *exec.Value {
		if in.IsError() {
			return in
		}
		t, ok := in.Interface().(Time)
		if !ok {
			return exec.AsValue(fmt.Errorf("filter %s takes a timestamp (logical_date, data_interval_start, ...), not a %s", name, kindOf(in)))
		}
		return exec.AsValue(t.Format(layout))
	}
}

// kindOf names what a value is, for an error.
func kindOf(v *exec.Value) string {
	switch {
	case v.IsString():
		return "string"
	case v.IsNumber():
		return "number"
	case v.IsList():
		return "list"
	case v.IsDict():
		return "mapping"
	}
	return fmt.Sprintf("%T", v.Interface())
}

// dsAdd is Airflow's macros.ds_add: ds, a YYYY-MM-DD date, moved by days
// (negative: back).
func dsAdd(ds string, days int) (string, error) {
	t, err := time.Parse("2006-01-02", ds)
	if err != nil {
		return "", fmt.Errorf("macros.ds_add: %q is not a YYYY-MM-DD date", ds)
	}
	return t.AddDate(0, 0, days).Format("2006-01-02"), nil
}

// dsFormat is Airflow's macros.ds_format: ds read in the strftime format
// in, written in out.
func dsFormat(ds, in, out string) (string, error) {
	inLayout, err := goLayout(in)
	if err != nil {
		return "", fmt.Errorf("macros.ds_format: %w", err)
	}
	outLayout, err := goLayout(out)
	if err != nil {
		return "", fmt.Errorf("macros.ds_format: %w", err)
	}
	t, err := time.Parse(inLayout, ds)
	if err != nil {
		return "", fmt.Errorf("macros.ds_format: %q does not match the format %q", ds, in)
	}
	return t.Format(outLayout), nil
}

// strftime maps the strftime directives Weir supports to Go's layout.
var strftime = map[byte]string{
	'Y': "2006", 'y': "06", 'm': "01", 'd': "02", 'H': "15", 'I': "03", 'M': "04", 'S': "05",
	'p': "PM", 'b': "Jan", 'B': "January", 'a': "Mon", 'A': "Monday", 'j': "002", 'f': "000000",
	'z': "-0700", 'Z': "MST", '%': "%",
}

// errDirective is a strftime directive Weir does not support.
var errDirective = errors.New("unsupported strftime directive")

// goLayout turns a Python strftime format into a Go time layout. A
// directive outside strftime's table is an error naming it.
func goLayout(format string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		if i+1 == len(format) {
			return "", fmt.Errorf("%w (format %q ends with %%)", errDirective, format)
		}
		i++
		layout, ok := strftime[format[i]]
		if !ok {
			return "", fmt.Errorf("%w %%%c in %q (supported are %%Y %%y %%m %%d %%H %%I %%M %%S %%p %%b %%B %%a %%A %%j %%f %%z %%Z %%%%)", errDirective, format[i], format)
		}
		b.WriteString(layout)
	}
	return b.String(), nil
}
