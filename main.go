package weir

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"slices"
	"syscall"

	"github.com/weirflow/weir/internal/cli"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/dagfile"
	"github.com/weirflow/weir/internal/operator"
)

// ExitInvalid is the exit code of Main when a DAG is invalid.
const ExitInvalid = 2

// Main runs the weir command line (os.Args) with dags and their Go task
// functions compiled in, and exits with its exit code: `prog standalone`,
// `prog scheduler`, `prog worker`, `prog dags test DAG_ID`, ... serve these
// DAGs next to the YAML DAGs of the DAG folder. The program must run as the
// worker too, since Go tasks run in the worker's process.
//
// Every DAG is validated first; when one is invalid (or two share a
// dag_id) Main prints every problem and exits with ExitInvalid before
// anything runs. SIGINT and SIGTERM shut down gracefully.
func Main(dags ...*DAG) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr, dags)
	stop()
	os.Exit(code)
}

// run is Main without the process: it returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, dags []*DAG) int {
	return runWith(ctx, args, stdout, stderr, dags, customTriggers)
}

// runWith is run with the custom trigger types given.
func runWith(ctx context.Context, args []string, stdout, stderr io.Writer, dags []*DAG, triggers []TriggerType) int {
	reg, err := triggerTypes(triggers)
	if err != nil {
		fmt.Fprintf(stderr, "Error: %v\n", err)
		return ExitInvalid
	}
	specs, funcs, err := compileAll(dags, checksOf(reg))
	if err != nil {
		fmt.Fprintf(stderr, "Error: invalid DAGs:\n%v\n", err)
		return ExitInvalid
	}
	return cli.Run(ctx, args, cli.Options{DAGs: specs, Functions: funcs, Triggers: triggers, Stdout: stdout, Stderr: stderr})
}

// compileAll validates the DAGs, their triggers with checkTrigger, and
// registers their Go task functions. It reports every problem of every DAG
// at once.
func compileAll(dags []*DAG, checks dagfile.Options) ([]core.DAG, *operator.Registry, error) {
	var (
		specs []core.DAG
		errs  []error
		seen  = map[string]bool{}
		funcs = operator.NewRegistry()
	)
	for i, d := range dags {
		if d == nil {
			errs = append(errs, fmt.Errorf("weir.Main argument %d is a nil DAG", i))
			continue
		}
		spec, err := d.compileWith(checks)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if seen[spec.DagID] {
			errs = append(errs, fmt.Errorf("%s: dag %q: dag_id: defined twice in weir.Main", spec.FileLoc, spec.DagID))
			continue
		}
		seen[spec.DagID] = true
		for name, fn := range d.callbacks {
			if err := funcs.RegisterCallback(name, adaptCallback(fn)); err != nil {
				errs = append(errs, fmt.Errorf("%s: dag %q: callback %s: %w", spec.FileLoc, spec.DagID, name, err))
			}
		}
		for _, t := range d.tasks {
			for name, fn := range t.callbacks {
				if err := funcs.RegisterCallback(name, adaptCallback(fn)); err != nil {
					errs = append(errs, fmt.Errorf("%s: dag %q: tasks.%s: callback %s: %w", spec.FileLoc, spec.DagID, t.ID(), name, err))
				}
			}
			if err := registerHandler(funcs, spec.DagID, t); err != nil {
				errs = append(errs, fmt.Errorf("%s: dag %q: tasks.%s: handle_function: %w", spec.FileLoc, spec.DagID, t.ID(), err))
			}
			if t.fn == nil {
				continue
			}
			name := FunctionName(spec.DagID, t.ID())
			methods := slices.Sorted(maps.Keys(t.resumes))
			if err := funcs.Register(name, adapt(t.fn, methods)); err != nil {
				errs = append(errs, fmt.Errorf("%s: dag %q: tasks.%s: %w", spec.FileLoc, spec.DagID, t.ID(), err))
			}
			for method, fn := range t.resumes {
				if err := funcs.Register(operator.ResumeFunctionName(name, method), adapt(fn, methods)); err != nil {
					errs = append(errs, fmt.Errorf("%s: dag %q: tasks.%s: on_resume: %w", spec.FileLoc, spec.DagID, t.ID(), err))
				}
			}
		}
		specs = append(specs, spec)
	}
	return specs, funcs, errors.Join(errs...)
}
