package cli

import (
	"testing"
)

// Each root command is built under the name it is listed by, so that a
// command line naming it builds it alone and gets the same command.
func TestRootCommandsAreListedByTheirNames(t *testing.T) {
	a := &app{opts: &Options{}}
	newRoot(a.opts) // fills the options the commands read
	for name, build := range a.commands() {
		if got := build().Name(); got != name {
			t.Errorf("commands()[%q] builds %q", name, got)
		}
	}
}

// A command line builds only the root command it names; without one (or
// naming none that exists, or help) it builds them all.
func TestCommandLineBuildsTheCommandItNames(t *testing.T) {
	all := len(newRoot(&Options{}).Commands())
	cases := []struct {
		args []string
		want string // the one command built; "" = all
	}{
		{[]string{"dags", "test", "hello"}, "dags"},
		{[]string{"--home", "/h", "--dags=/d", "task-state", "get", "k"}, "task-state"},
		{[]string{"--home=/h", "dags", "list"}, "dags"},
		{[]string{"--help", "dags"}, ""},
		{[]string{"-h", "dags"}, ""},
		{[]string{"--", "dags"}, ""},
		{[]string{"--dags", "/d", "version"}, "version"},
		{[]string{"help", "dags"}, ""},
		{[]string{"dgas", "list"}, ""},
		{[]string{"--help"}, ""},
		{nil, ""},
	}
	for _, c := range cases {
		root := newRootFor(&Options{}, c.args)
		got := root.Commands()
		switch {
		case c.want == "" && len(got) < all:
			t.Errorf("%q builds %d commands, want all %d", c.args, len(got), all)
		case c.want != "" && (len(got) != 1 || got[0].Name() != c.want):
			t.Errorf("%q builds %d commands (first %q), want %s alone", c.args, len(got), got[0].Name(), c.want)
		}
	}
}
