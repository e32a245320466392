package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/weirflow/weir"
)

// pagesAddr is where this program serves the example's paginated API
// (examples/dags/stream_pages.yaml reads it too).
const pagesAddr = "127.0.0.1:8791"

// Pages of the example API: pagesCount pages of pageOrders orders, each
// answered after pageDelay (a slow API, so that the pipeline shows the
// inserts running while later pages are being fetched).
const (
	pagesCount = 20
	pageOrders = 5
	pageDelay  = 50 * time.Millisecond
)

// servePages serves GET /orders?page=N: {"orders": [{"id", "total"}...],
// "next": "/orders?page=N+1" or null after the last page}. Every role of
// a deployment runs this program; the first to bind the address serves
// it, and the others try again every second, taking over when it exits.
func servePages() {
	go func() {
		for {
			if ln, err := net.Listen("tcp", pagesAddr); err == nil {
				_ = (&http.Server{Handler: pagesAPI(), ReadHeaderTimeout: 5 * time.Second}).Serve(ln)
			}
			time.Sleep(time.Second)
		}
	}()
}

// pagesAPI is the example's paginated API.
func pagesAPI() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /orders", func(w http.ResponseWriter, r *http.Request) {
		page, err := strconv.Atoi(r.URL.Query().Get("page"))
		if err != nil || page < 1 {
			page = 1
		}
		time.Sleep(pageDelay)
		body := map[string]any{"orders": []any{}, "next": nil}
		if page <= pagesCount {
			orders := make([]map[string]int, pageOrders)
			for i := range orders {
				id := (page-1)*pageOrders + i + 1
				orders[i] = map[string]int{"id": id, "total": id * 10}
			}
			body["orders"] = orders
		}
		if page < pagesCount {
			body["next"] = fmt.Sprintf("/orders?page=%d", page+1)
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(body)
	})
	return mux
}

// pageEvent is an http_paginated page event with its items.
type pageEvent struct {
	Page  int `json:"page"`
	Items []struct {
		ID    int `json:"id"`
		Total int `json:"total"`
	} `json:"items"`
}

// streamPagesDAG is the streaming pipeline of issue 10 (docs/streaming.md):
// fetch follows the paginated API with the http_paginated trigger; insert
// is mapped lazily over its pages (one instance per page, started while
// later pages are still being fetched) and writes each page's orders into
// a SQLite table; report counts the rows once every page is in. load is
// the same inserts as a streaming operator: one try handles every page in
// order, a retry resuming at the page that failed.
func streamPagesDAG() *weir.DAG {
	dag := weir.NewDAG("go_stream_pages",
		weir.Description("Inserts the pages of a paginated API into SQLite while later pages are still being fetched."),
		weir.Tags("example", "go", "streaming"),
		weir.Params(map[string]any{"db": filepath.Join(os.TempDir(), "weir-stream-pages.db")}),
		weir.DefaultArgs(weir.Retries(2), weir.RetryDelay(time.Second)),
	)
	pages, err := weir.NewTrigger("http_paginated", map[string]any{
		"url": "http://" + pagesAddr + "/orders", "next_link": ".next", "items": ".orders"})
	if err != nil {
		panic(err) // a literal the type accepts
	}
	fetch := dag.Sensor("fetch", pages)
	insert := dag.Go("insert", func(ctx context.Context, tc *weir.TaskContext) (any, error) {
		page, err := weir.MapArg[pageEvent](tc, "item")
		if err != nil {
			return nil, err
		}
		return len(page.Items), insertPage(ctx, tc, "stream_orders", page)
	}, weir.Iterate(fetch))
	dag.Go("report", func(ctx context.Context, tc *weir.TaskContext) (any, error) {
		db, err := openPagesDB(ctx, tc)
		if err != nil {
			return nil, err
		}
		defer func() { _ = db.Close() }()
		var n int
		err = db.QueryRowContext(ctx, "SELECT count(*) FROM stream_orders").Scan(&n)
		return n, err
	}, weir.DependsOn(insert))
	dag.Sensor("load", pages, weir.HandleStream(func(ctx context.Context, tc *weir.TaskContext, ev weir.StreamEvent) error {
		var page pageEvent
		if err := ev.Decode(&page); err != nil {
			return err
		}
		return insertPage(ctx, tc, "handled_orders", page) // an error: the retry resumes at this page
	}))
	return dag
}

// openPagesDB opens the example's SQLite file (param db) with its tables.
func openPagesDB(ctx context.Context, tc *weir.TaskContext) (*sql.DB, error) {
	path, ok := tc.Params["db"].(string)
	if !ok || path == "" {
		return nil, errors.New("param db must name a SQLite file")
	}
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		return nil, err
	}
	for _, table := range []string{"stream_orders", "handled_orders"} {
		if _, err := db.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS "+table+" (id INTEGER PRIMARY KEY, total INTEGER NOT NULL)"); err != nil {
			_ = db.Close()
			return nil, err
		}
	}
	return db, nil
}

// insertPage writes a page's orders into table, idempotently (a retry
// that inserts a page again changes nothing).
func insertPage(ctx context.Context, tc *weir.TaskContext, table string, page pageEvent) error {
	db, err := openPagesDB(ctx, tc)
	if err != nil {
		return err
	}
	defer func() { _ = db.Close() }()
	for _, o := range page.Items {
		if _, err := db.ExecContext(ctx, "INSERT OR REPLACE INTO "+table+" (id, total) VALUES ($1, $2)", o.ID, o.Total); err != nil { //nolint:gosec // table is one of two constants
			return fmt.Errorf("insert order %d of page %d: %w", o.ID, page.Page, err)
		}
	}
	return nil
}
