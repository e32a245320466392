package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/weirflow/weir/internal/store"
)

// pageFlags are the --limit and --offset of a list command: lists that grow
// are read a page at a time, in the database, like the REST API's.
type pageFlags struct {
	limit, offset int
}

// add registers --limit (default def) and --offset on cmd; what names the
// listed things in the help.
func (f *pageFlags) add(cmd *cobra.Command, what string, def int) {
	cmd.Flags().IntVar(&f.limit, "limit", def, "show at most this many "+what)
	cmd.Flags().IntVar(&f.offset, "offset", 0, "skip this many "+what+" first")
}

// page checks the flags and returns the page the store reads.
func (f *pageFlags) page() (store.Page, error) {
	if f.limit < 1 {
		return store.Page{}, fmt.Errorf("--limit %d: must be at least 1", f.limit)
	}
	if f.offset < 0 {
		return store.Page{}, fmt.Errorf("--offset %d: must not be negative", f.offset)
	}
	return store.Page{Limit: f.limit, Offset: f.offset}, nil
}

// more tells w (stderr, so that tables and JSON on stdout stay whole) how to
// see the rest when the page shown is not the end of the list.
func (f *pageFlags) more(w io.Writer, shown, total int) {
	if f.offset+shown < total {
		fmt.Fprintf(w, "showing %d of %d from offset %d; --offset %d shows the next\n",
			shown, total, f.offset, f.offset+shown)
	}
}

// shownPage passes on a page a backend returned, with its total, and tells
// stderr how to see the rest.
func shownPage[T any](cmd *cobra.Command, f *pageFlags, items []T, total int, err error) ([]T, error) {
	if err != nil {
		return nil, err
	}
	f.more(cmd.ErrOrStderr(), len(items), total)
	return items, nil
}

// listThrough is the action of a list command with a remote transport:
// the page of f, read through the command's backend with list, the hint
// for the rest on stderr, then show.
func listThrough[T any](a *app, cmd *cobra.Command, f *pageFlags,
	list func(context.Context, backend, store.Page) ([]T, int, error), show func([]T) error) error {
	pg, err := f.page()
	if err != nil {
		return err
	}
	return a.withBackend(cmd, func(b backend) error {
		items, total, err := list(cmd.Context(), b, pg)
		if items, err = shownPage(cmd, f, items, total, err); err != nil {
			return err
		}
		return show(items)
	})
}

// listPage reads the page p holds (from f.page) with list and count
// (store.List) and tells stderr how to see the rest.
func listPage[P, T any](cmd *cobra.Command, f *pageFlags, p *P,
	list func(context.Context, *P) ([]T, error), count func(context.Context, *P) (int, error)) ([]T, error) {
	items, total, err := store.List(cmd.Context(), p, list, count)
	if err != nil {
		return nil, err
	}
	f.more(cmd.ErrOrStderr(), len(items), total)
	return items, nil
}
