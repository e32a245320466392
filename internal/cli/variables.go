package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/weirflow/weir/internal/api"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/secrets"
	"github.com/weirflow/weir/internal/store"
)

// variablesCmd manages Variables (docs/variables.md). Inside a task, get
// reads through the Execution API; everywhere else the commands use the
// deployment's database.
func (a *app) variablesCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "variables", Short: "Manage Variables: key/value configuration read by templates and tasks"}
	var getDefault string
	var getJSON bool
	get := &cobra.Command{
		Use:   "get KEY",
		Short: "Print a variable's value (inside a task: through the Execution API)",
		Example: "  weir variables get region\n  weir variables get thresholds --json\n" +
			"  weir variables get maybe --default none",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			v, err := a.variable(cmd, args[0])
			if errors.Is(err, core.ErrNotFound) && cmd.Flags().Changed("default") {
				v, err = getDefault, nil
			}
			if err != nil {
				return err
			}
			return printVariable(cmd.OutOrStdout(), args[0], v, getJSON)
		},
	}
	get.Flags().StringVar(&getDefault, "default", "", "print this when the variable does not exist (instead of failing)")
	get.Flags().BoolVar(&getJSON, "json", false, "decode the value as JSON and print it indented")

	var description string
	var setJSON bool
	set := &cobra.Command{
		Use:     "set KEY VALUE",
		Short:   "Create or replace a variable",
		Example: "  weir variables set region eu-west-1\n  weir variables set thresholds '{\"rows\": 1000}' --json --description 'alert limits'",
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			value := args[1]
			if setJSON {
				var b bytes.Buffer
				if err := json.Compact(&b, []byte(value)); err != nil {
					return fmt.Errorf("--json: the value of %q is not JSON: %w", args[0], err)
				}
				value = b.String()
			}
			return a.withBackend(cmd, func(b backend) error {
				v := core.Variable{Key: args[0], Value: value, Description: description}
				if err := b.VariableSet(cmd.Context(), v, !cmd.Flags().Changed("description")); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "variable %s set\n", args[0])
				return nil
			})
		},
	}
	set.Flags().StringVar(&description, "description", "", "what the variable is for (kept when not given)")
	set.Flags().BoolVar(&setJSON, "json", false, "check that VALUE is JSON and store it compact")

	list := &cobra.Command{
		Use:   "list",
		Short: "List variables (keys and descriptions; values are not printed)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withBackend(cmd, func(b backend) error {
				return eachVariablePage(cmd, b, func(vs []core.Variable) error {
					rows := make([][]string, len(vs))
					for i, v := range vs {
						rows[i] = []string{v.Key, v.Description}
						if v.Undecryptable != "" {
							rows[i][1] = strings.TrimSpace(v.Description + " " + api.ShownValue(v))
						}
					}
					return table(cmd.OutOrStdout(), []string{"KEY", "DESCRIPTION"}, rows)
				})
			})
		},
	}
	del := &cobra.Command{
		Use:   "delete KEY",
		Short: "Delete a variable",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withBackend(cmd, func(b backend) error {
				if err := b.VariableDelete(cmd.Context(), args[0]); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "variable %s deleted\n", args[0])
				return nil
			})
		},
	}
	cmd.AddCommand(get, set, list, del, a.variablesImportCmd(), a.variablesExportCmd())
	return cmd
}

// variable reads key: through the Execution API inside a task (its
// environment names the API), else from the database.
func (a *app) variable(cmd *cobra.Command, key string) (string, error) {
	if c, err := execclient.ClientFromEnv(); err == nil {
		v, err := c.Variable(cmd.Context(), key)
		if errors.Is(err, core.ErrNotFound) {
			return "", fmt.Errorf("variable %q does not exist: %w", key, core.ErrNotFound)
		}
		return v, err
	}
	var out string
	err := a.withBackend(cmd, func(b backend) error {
		v, err := b.VariableGet(cmd.Context(), key)
		if errors.Is(err, core.ErrNotFound) {
			return fmt.Errorf("variable %q does not exist: %w", key, core.ErrNotFound)
		}
		if err != nil {
			return err
		}
		out = v.Value
		return nil
	})
	return out, err
}

// printVariable prints a value as it is, or decoded and indented.
func printVariable(w io.Writer, key, v string, asJSON bool) error {
	if !asJSON {
		_, err := fmt.Fprintln(w, v)
		return err
	}
	var b bytes.Buffer
	if err := json.Indent(&b, []byte(v), "", "  "); err != nil {
		return fmt.Errorf("--json: variable %q is not JSON: %w", key, err)
	}
	_, err := fmt.Fprintln(w, b.String())
	return err
}

// eachVariablePage calls fn with every variable, a page at a time, by key.
func eachVariablePage(cmd *cobra.Command, b backend, fn func([]core.Variable) error) error {
	var all []core.Variable
	for off := 0; ; off += 500 {
		vs, _, err := b.VariableList(cmd.Context(), &store.VariableListParams{Page: store.Page{Limit: 500, Offset: off}})
		if err != nil {
			return err
		}
		all = append(all, vs...)
		if len(vs) < 500 {
			return fn(all)
		}
	}
}

// variablesImportCmd loads variables from a JSON object file.
func (a *app) variablesImportCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "import FILE",
		Short: "Create or replace variables from a JSON object of key → value (a non-string value is stored as JSON)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			raw, err := os.ReadFile(args[0])
			if err != nil {
				return err
			}
			var m map[string]json.RawMessage
			if err := json.Unmarshal(raw, &m); err != nil {
				return fmt.Errorf("%s: want a JSON object of variable key → value: %w", args[0], err)
			}
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			return a.withBackend(cmd, func(be backend) error {
				for _, k := range keys {
					var s string
					if json.Unmarshal(m[k], &s) != nil {
						var b bytes.Buffer
						_ = json.Compact(&b, m[k]) // valid: it came out of a decoded object
						s = b.String()
					}
					if err := be.VariableSet(cmd.Context(), core.Variable{Key: k, Value: s}, true); err != nil {
						return err
					}
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%d variables imported\n", len(keys))
				return nil
			})
		},
	}
}

// variablesExportCmd writes every variable to a JSON object file.
func (a *app) variablesExportCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "export FILE",
		Short: "Write every variable to a JSON object of key → value (a value that is JSON is written as JSON); - = stdout",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withBackend(cmd, func(be backend) error {
				return eachVariablePage(cmd, be, func(vs []core.Variable) error {
					readable := vs[:0] // a value that does not decrypt here is not exported as ""
					for _, v := range vs {
						if v.Undecryptable == "" {
							readable = append(readable, v)
						}
					}
					undecryptable := len(vs) - len(readable)
					vs = readable
					if be.MasksSecrets() { // the API shows a secret, or one inside a JSON value, as ***: leave it out, never export ***
						kept := vs[:0]
						for _, v := range vs {
							if !secrets.SensitiveName(v.Key) && !strings.Contains(v.Value, secrets.Masked) {
								kept = append(kept, v)
							}
						}
						if left := len(vs) - len(kept); left > 0 {
							fmt.Fprintf(cmd.ErrOrStderr(), "%d secret variables left out: the REST API shows their values (or the secrets in them) as ***; "+
								"export them where the database is configured\n", left)
						}
						vs = kept
					}
					m := make(map[string]json.RawMessage, len(vs))
					for _, v := range vs {
						if json.Valid([]byte(v.Value)) {
							m[v.Key] = json.RawMessage(v.Value)
						} else {
							m[v.Key], _ = json.Marshal(v.Value) // a string always encodes
						}
					}
					out, err := json.MarshalIndent(m, "", "  ")
					if err != nil {
						return err
					}
					if args[0] == "-" {
						if _, err := fmt.Fprintln(cmd.OutOrStdout(), string(out)); err != nil {
							return err
						}
						return undecryptableLeftOut(undecryptable)
					}
					if err := os.WriteFile(args[0], append(out, '\n'), 0o600); err != nil {
						return err
					}
					fmt.Fprintf(cmd.OutOrStdout(), "%d variables exported to %s (%d secret)\n", len(vs), args[0], countSecret(vs))
					return undecryptableLeftOut(undecryptable)
				})
			})
		},
	}
}

// undecryptableLeftOut is an export's error when n variables were left out
// because their values do not decrypt here: the file is not a whole backup.
func undecryptableLeftOut(n int) error {
	if n == 0 {
		return nil
	}
	return fmt.Errorf("%d variables left out: their values do not decrypt with this node's [core] secrets_key_file "+
		"(weir variables list names them); the others were exported", n)
}

// countSecret counts the variables whose keys name secrets.
func countSecret(vs []core.Variable) int {
	n := 0
	for _, v := range vs {
		if secrets.SensitiveName(v.Key) {
			n++
		}
	}
	return n
}
