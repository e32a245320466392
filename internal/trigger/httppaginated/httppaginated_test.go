package httppaginated_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/weirflow/weir/internal/trigger"
	"github.com/weirflow/weir/internal/trigger/httppaginated"
	"github.com/weirflow/weir/internal/trigger/triggertest"
)

// api serves 5 pages of 3 items (item n = 1..15) three ways: /next
// (a next link in the body, relative), /cursor (?after=<cursor>, the next
// cursor in the body) and /page (?page=N from 1, an empty page after the
// last).
func api(t *testing.T) *httptest.Server {
	t.Helper()
	items := func(page int) []int {
		if page < 1 || page > 5 {
			return []int{}
		}
		return []int{3*page - 2, 3*page - 1, 3 * page}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/next", func(w http.ResponseWriter, r *http.Request) {
		page, _ := strconv.Atoi(r.URL.Query().Get("p"))
		page = max(page, 1)
		body := map[string]any{"data": items(page), "next": nil}
		if page < 5 {
			body["next"] = fmt.Sprintf("next?p=%d", page+1)
		}
		_ = json.NewEncoder(w).Encode(body)
	})
	mux.HandleFunc("/cursor", func(w http.ResponseWriter, r *http.Request) {
		page := 1
		if a := r.URL.Query().Get("after"); a != "" {
			page, _ = strconv.Atoi(strings.TrimPrefix(a, "c"))
			page++
		}
		body := map[string]any{"data": items(page), "cursor": ""}
		if page < 5 {
			body["cursor"] = fmt.Sprintf("c%d", page)
		}
		_ = json.NewEncoder(w).Encode(body)
	})
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		page, _ := strconv.Atoi(r.URL.Query().Get("page"))
		_ = json.NewEncoder(w).Encode(map[string]any{"data": items(page)})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// TestEachPaginationYieldsEveryItemInOrder: by next link, cursor and page
// number, one event per item gives items 1..15 in order and the trigger
// ends after the last page; resumed after event 6 (item 7), it emits 8..15.
func TestEachPaginationYieldsEveryItemInOrder(t *testing.T) {
	t.Parallel()
	srv := api(t)
	for name, kw := range map[string]string{
		"next_link": `"url":"` + srv.URL + `/next","next_link":".next"`,
		"cursor":    `"url":"` + srv.URL + `/cursor","cursor":".cursor","cursor_param":"after"`,
		"page":      `"url":"` + srv.URL + `/page","page_param":"page"`,
	} {
		for _, last := range []int64{-1, 6} {
			tr := triggertest.New(t, httppaginated.Type, `{`+kw+`,"items":".data","emit":"items"}`)
			run := triggertest.Start(t, tr, &trigger.Runtime{Stream: &trigger.StreamPosition{ID: "s", LastIndex: last}})
			for want := last + 2; want <= 15; want++ {
				if got := string(run.Event(t)); got != fmt.Sprint(want) {
					t.Fatalf("%s after %d: event = %s, want item %d", name, last, got, want)
				}
			}
			if err := run.Wait(t); err != nil {
				t.Errorf("%s: after the last page the trigger returned %v", name, err)
			}
		}
	}
}

// TestPagesAsEvents: by default each page is an event {page, url, items};
// resumed after page 2 with page_param, it fetches page 3 directly.
func TestPagesAsEvents(t *testing.T) {
	t.Parallel()
	srv := api(t)
	run := triggertest.Start(t, triggertest.New(t, httppaginated.Type, `{"url":"`+srv.URL+`/page","page_param":"page","items":".data"}`),
		&trigger.Runtime{Stream: &trigger.StreamPosition{ID: "s", LastIndex: 1}})
	for want := 3; want <= 5; want++ {
		var p httppaginated.Page
		if err := json.Unmarshal(run.Event(t), &p); err != nil {
			t.Fatal(err)
		}
		if p.Page != want || !strings.HasSuffix(p.URL, "page="+strconv.Itoa(want)) || len(p.Items) != 3 || p.Items[0] != float64(3*want-2) {
			t.Fatalf("page event = %+v, want page %d with its 3 items", p, want)
		}
	}
	if err := run.Wait(t); err != nil {
		t.Errorf("after the last page the trigger returned %v", err)
	}
}

func TestRefusals(t *testing.T) {
	t.Parallel()
	for kwargs, want := range map[string]string{
		`{"url":"http://h/x"}`: `"next_link" or cursor (with cursor_param) or page_param is required, exactly one`,
		`{"url":"http://h/x","next_link":".n","page_param":"p"}`: `exactly one`,
		`{"url":"http://h/x","cursor":".c"}`:                     `"cursor_param" is required with cursor`,
		`{"url":"http://h/x","page_param":"p"}`:                  `"items" is required with page_param`,
		`{"url":"http://h/x","next_link":".n","emit":"items"}`:   `"emit" items needs the items kwarg`,
		`{"url":"http://h/x","next_link":".n","emit":"rows"}`:    `"emit" must be pages`,
		`{"url":"http://h/x","next_link":".[","items":".d"}`:     `"next_link" is not a valid jq expression`,
		`{"url":"http://h/x","next_link":".n","max_pages":0}`:    `"max_pages" must be at least 1`,
		`{"url":"http://h/x","next_link":".n","first_page":0}`:   `"first_page" is only for page_param`,
		`{"url":"ftp://h/x","next_link":".n"}`:                   `"url" must be an absolute http(s) URL`,
	} {
		if _, err := httppaginated.Type.New(json.RawMessage(kwargs)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("New(%s) = %v, want an error containing %q", kwargs, err, want)
		}
	}
}

// TestTransientFailuresAreRetried: a page answering 503 once is asked for
// again (the failure logged), and the stream goes on without a gap; a 404
// fails the trigger at once naming the page's URL.
func TestTransientFailuresAreRetried(t *testing.T) {
	t.Parallel()
	var failed atomic.Bool
	mux := http.NewServeMux()
	mux.HandleFunc("/p", func(w http.ResponseWriter, r *http.Request) {
		page, _ := strconv.Atoi(r.URL.Query().Get("page"))
		if page == 2 && failed.CompareAndSwap(false, true) {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		items := []int{}
		if page <= 3 {
			items = []int{page}
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"data": items})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	run := triggertest.Start(t, triggertest.New(t, httppaginated.Type, `{"url":"`+srv.URL+`/p","page_param":"page","items":".data","emit":"items"}`), nil)
	for want := 1; want <= 3; want++ {
		if got := string(run.Event(t)); got != strconv.Itoa(want) {
			t.Fatalf("event = %s, want %d", got, want)
		}
	}
	if err := run.Wait(t); err != nil || !strings.Contains(run.Log(), "503") {
		t.Errorf("run = %v, log:\n%s; want success with the 503 logged", err, run.Log())
	}
	run = triggertest.Start(t, triggertest.New(t, httppaginated.Type, `{"url":"`+srv.URL+`/missing","next_link":".next"}`), nil)
	if err := run.Wait(t); err == nil || !strings.Contains(err.Error(), "/missing answered 404") {
		t.Errorf("run over a missing page = %v, want a failure naming the 404", err)
	}
}
