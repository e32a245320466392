package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/spf13/cobra"
)

// outputFormat is the -o/--output flag of a listing, as Airflow's CLI has
// it: table (aligned columns under a header), json and yaml (the items as
// the REST API spells them, snake_case), or plain (tab-separated rows
// without a header, for scripts). A bad value is refused while the flags are
// parsed, before anything runs.
type outputFormat string

var outputFormats = []string{"table", "json", "yaml", "plain"}

// String implements pflag.Value.
func (f *outputFormat) String() string { return string(*f) }

// Type implements pflag.Value.
func (f *outputFormat) Type() string { return "format" }

// Set implements pflag.Value.
func (f *outputFormat) Set(s string) error {
	for _, ok := range outputFormats {
		if s == ok {
			*f = outputFormat(s)
			return nil
		}
	}
	return fmt.Errorf("want %s", strings.Join(outputFormats, ", "))
}

// output holds a listing's -o/--output and its older spelling --json.
type output struct {
	format outputFormat
	json   bool
}

// add registers -o/--output (default table) and --json on cmd.
func (o *output) add(cmd *cobra.Command) {
	o.format = "table"
	cmd.Flags().VarP(&o.format, "output", "o", "output format: table, json, yaml or plain (tab-separated rows, no header)")
	cmd.Flags().BoolVar(&o.json, "json", false, "print JSON (same as --output json)")
}

// structured reports whether the items themselves are printed (json or
// yaml) rather than rows.
func (o *output) structured() bool {
	return o.json || o.format == "json" || o.format == "yaml"
}

// isTable reports whether the default table is asked for (a command
// may print it its own way).
func (o *output) isTable() bool { return !o.json && o.format == "table" }

// print writes items (json, yaml) or the rows under header (table, plain).
func (o *output) print(w io.Writer, items any, header []string, rows [][]string) error {
	switch {
	case o.json || o.format == "json":
		return printJSON(w, items)
	case o.format == "yaml":
		return printYAML(w, items)
	case o.format == "plain":
		for _, r := range rows {
			if _, err := fmt.Fprintln(w, strings.Join(r, "\t")); err != nil {
				return err
			}
		}
		return nil
	}
	return table(w, header, rows)
}

// printYAML prints v as YAML with the names its JSON form uses (snake_case,
// like the REST API), by way of JSON.
func printYAML(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	var generic any
	if err := json.Unmarshal(b, &generic); err != nil {
		return err
	}
	out, err := yaml.MarshalWithOptions(generic, yaml.UseLiteralStyleIfMultiline(true))
	if err != nil {
		return err
	}
	_, err = w.Write(out)
	return err
}
