package s3client

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// server is a loopback HTTP server answering each request with handle,
// recording the requests (method, path and query, region signed for).
type server struct {
	mu   sync.Mutex
	seen []string
	srv  *httptest.Server
}

func serve(t *testing.T, handle func(w http.ResponseWriter, r *http.Request, n int)) (*server, *Client) {
	t.Helper()
	s := &server{}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		region := ""
		if _, after, ok := strings.Cut(r.Header.Get("Authorization"), "/"); ok {
			region = strings.Split(after, "/")[1]
		}
		s.mu.Lock()
		n := len(s.seen)
		s.seen = append(s.seen, r.Method+" "+r.URL.RequestURI()+" "+region)
		s.mu.Unlock()
		handle(w, r, n)
	}))
	t.Cleanup(s.srv.Close)
	c, err := New(Config{Endpoint: strings.TrimPrefix(s.srv.URL, "http://"), Credentials: Credentials{AccessKey: "a", SecretKey: "s"}})
	if err != nil {
		t.Fatal(err)
	}
	return s, c
}

func (s *server) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.seen...)
}

func xmlError(w http.ResponseWriter, status int, code, region string) {
	w.WriteHeader(status)
	fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>m</Message><Region>%s</Region></Error>`, code, region)
}

// Without a configured region the bucket's is asked once (GET ?location)
// and used to sign; "EU" is eu-west-1, an empty answer us-east-1.
func TestRegionAskedOncePerBucket(t *testing.T) {
	t.Parallel()
	s, c := serve(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		if r.URL.RawQuery == "location=" {
			loc := map[string]string{"/eu/": "EU", "/us/": "", "/ap/": "ap-south-1"}[r.URL.Path]
			fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><LocationConstraint xmlns="http://s3.amazonaws.com/doc/2006-03-01/">%s</LocationConstraint>`, loc)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	ctx := context.Background()
	for _, b := range []string{"eu", "eu", "us", "ap"} {
		if err := c.Put(ctx, b, "k", []byte("v"), "text/plain"); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"GET /eu/?location= us-east-1", "PUT /eu/k eu-west-1", "PUT /eu/k eu-west-1",
		"GET /us/?location= us-east-1", "PUT /us/k us-east-1", "GET /ap/?location= us-east-1", "PUT /ap/k ap-south-1"}
	if got := s.requests(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("requests:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A server that refuses ?location gets us-east-1 signatures; one that
// then names the bucket's region (AuthorizationHeaderMalformed) gets the
// request again, signed for it. A missing bucket is an error at once.
func TestRegionFromARefusal(t *testing.T) {
	t.Parallel()
	s, c := serve(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		switch {
		case r.URL.Path == "/gone/":
			xmlError(w, http.StatusNotFound, "NoSuchBucket", "")
		case r.URL.RawQuery == "location=":
			xmlError(w, http.StatusForbidden, "AccessDenied", "")
		case !strings.Contains(r.Header.Get("Authorization"), "/eu-central-1/"):
			xmlError(w, http.StatusBadRequest, "AuthorizationHeaderMalformed", "eu-central-1")
		default:
			_, _ = w.Write([]byte("data"))
		}
	})
	data, err := c.Get(context.Background(), "b", "k")
	if err != nil || string(data) != "data" {
		t.Fatalf("Get = %q, %v", data, err)
	}
	want := "GET /b/?location= us-east-1\nGET /b/k us-east-1\nGET /b/k eu-central-1"
	if got := strings.Join(s.requests(), "\n"); got != want {
		t.Errorf("requests:\n%s\nwant\n%s", got, want)
	}
	if _, err := c.Get(context.Background(), "gone", "k"); Code(err) != "NoSuchBucket" {
		t.Errorf("Get from a missing bucket = %v", err)
	}
}

// Busy or failing answers (5xx, SlowDown) are retried; refusals are not;
// a bodiless 404 is NoSuchKey for an object; deleting an absent object
// is no error.
func TestRetriesAndErrors(t *testing.T) {
	t.Parallel()
	s, c := serve(t, func(w http.ResponseWriter, r *http.Request, n int) {
		switch r.URL.Path {
		case "/b/flaky":
			if n < 2 {
				xmlError(w, http.StatusServiceUnavailable, "SlowDown", "")
				return
			}
			_, _ = w.Write([]byte("ok"))
		case "/b/denied":
			xmlError(w, http.StatusForbidden, "AccessDenied", "")
		case "/b/broken":
			xmlError(w, http.StatusInternalServerError, "InternalError", "")
		case "/b/unimplemented":
			xmlError(w, http.StatusNotImplemented, "NotImplemented", "")
		case "/b/bare403":
			w.WriteHeader(http.StatusForbidden)
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	})
	c.cfg.Region = "us-east-1"
	ctx := context.Background()
	if data, err := c.Get(ctx, "b", "flaky"); err != nil || string(data) != "ok" {
		t.Errorf("Get after two SlowDowns = %q, %v", data, err)
	}
	if _, err := c.Get(ctx, "b", "denied"); Code(err) != "AccessDenied" || !strings.Contains(err.Error(), "AccessDenied (HTTP 403): m") {
		t.Errorf("Get refused = %v", err)
	}
	if _, err := c.Get(ctx, "b", "broken"); Code(err) != "InternalError" {
		t.Errorf("Get from a failing server = %v", err)
	}
	if _, err := c.Get(ctx, "b", "unimplemented"); Code(err) != "NotImplemented" {
		t.Errorf("Get refused as not implemented = %v", err)
	}
	if _, err := c.Get(ctx, "b", "bare403"); Code(err) != "AccessDenied" {
		t.Errorf("Get refused without a body = %v", err)
	}
	if _, err := c.Get(ctx, "b", "absent"); Code(err) != "NoSuchKey" {
		t.Errorf("Get of an absent object = %v", err)
	}
	if err := c.Delete(ctx, "b", "absent"); err != nil {
		t.Errorf("Delete of an absent object = %v", err)
	}
	counts := map[string]int{}
	for _, r := range s.requests() {
		counts[strings.Fields(r)[1]]++
	}
	if counts["/b/flaky"] != 3 || counts["/b/denied"] != 1 || counts["/b/broken"] != attempts || counts["/b/unimplemented"] != 1 {
		t.Errorf("requests per object %v; want flaky 3, denied 1, broken %d, unimplemented 1", counts, attempts)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := c.Get(cctx, "b", "broken"); err == nil {
		t.Error("Get with a cancelled context succeeded")
	}
}

// A listing follows continuation tokens and decodes url-encoded keys;
// fn returning false stops it.
func TestListPages(t *testing.T) {
	t.Parallel()
	pages := []string{
		`<ListBucketResult><EncodingType>url</EncodingType><IsTruncated>true</IsTruncated><NextContinuationToken>t 1</NextContinuationToken>
		<Contents><Key>a%20b</Key><Size>3</Size><ETag>&quot;e1&quot;</ETag><LastModified>2026-05-01T08:00:00.000Z</LastModified></Contents></ListBucketResult>`,
		`<ListBucketResult><EncodingType>url</EncodingType><IsTruncated>false</IsTruncated>
		<Contents><Key>c%2Bd</Key><Size>0</Size><ETag>&quot;e2&quot;</ETag><LastModified>2026-05-01T09:00:00Z</LastModified></Contents>
		<Contents><Key>e</Key></Contents></ListBucketResult>`,
	}
	s, c := serve(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		page := 0
		if r.URL.Query().Get("continuation-token") == "t 1" {
			page = 1
		}
		_, _ = w.Write([]byte(pages[page]))
	})
	c.cfg.Region = "us-east-1"
	var got []string
	err := c.List(context.Background(), "b", "p/", func(o Object) bool {
		got = append(got, fmt.Sprintf("%s %d %s %s", o.Key, o.Size, o.ETag, o.LastModified.Format("15:04")))
		return o.Key != "c+d"
	})
	if err != nil || strings.Join(got, ",") != `a b 3 "e1" 08:00,c+d 0 "e2" 09:00` {
		t.Errorf("List = %v, %v", got, err)
	}
	if reqs := s.requests(); len(reqs) != 2 || !strings.Contains(reqs[0], "list-type=2") || !strings.Contains(reqs[0], "prefix=p%2F") ||
		!strings.Contains(reqs[1], "continuation-token=t%201") {
		t.Errorf("requests %v", reqs)
	}
}

// AWS endpoints get the bucket in the host name unless its dots would
// break the certificate; other servers in the path; a setting wins. A
// bucket in another region goes to that region's endpoint.
func TestAddressing(t *testing.T) {
	t.Parallel()
	yes, no := true, false
	for _, c := range []struct {
		endpoint string
		secure   bool
		path     *bool
		bucket   string
		region   string
		want     string
	}{
		{"s3.amazonaws.com", true, nil, "b", "us-east-1", "https://b.s3.amazonaws.com/k%20x"},
		{"s3.amazonaws.com", true, nil, "b", "eu-west-1", "https://b.s3.eu-west-1.amazonaws.com/k%20x"},
		{"s3.amazonaws.com", true, nil, "a.b", "us-east-1", "https://s3.amazonaws.com/a.b/k%20x"},
		{"s3.eu-west-1.amazonaws.com", true, nil, "b", "eu-west-1", "https://b.s3.eu-west-1.amazonaws.com/k%20x"},
		{"s3.amazonaws.com:443", true, &yes, "b", "eu-west-1", "https://s3.eu-west-1.amazonaws.com:443/b/k%20x"},
		{"s3.eu-west-1.amazonaws.com", true, nil, "b", "ap-south-1", "https://b.s3.ap-south-1.amazonaws.com/k%20x"},
		{"s3.eu-west-1.amazonaws.com", true, nil, "b", "", "https://b.s3.eu-west-1.amazonaws.com/k%20x"},
		{"s3.dualstack.us-east-1.amazonaws.com", true, nil, "b", "us-east-1", "https://b.s3.dualstack.us-east-1.amazonaws.com/k%20x"},
		{"s3-fips.us-east-1.amazonaws.com", true, nil, "b", "us-east-1", "https://b.s3-fips.us-east-1.amazonaws.com/k%20x"},
		{"s3-fips.dualstack.us-west-2.amazonaws.com", true, nil, "b", "us-west-2", "https://b.s3-fips.dualstack.us-west-2.amazonaws.com/k%20x"},
		{"s3-accelerate.amazonaws.com", true, nil, "b", "eu-west-1", "https://b.s3-accelerate.amazonaws.com/k%20x"},
		{"localhost:8333", false, nil, "b", "us-east-1", "http://localhost:8333/b/k%20x"},
		{"minio.internal", true, &no, "b", "", "https://b.minio.internal/k%20x"},
		{"s3.amazonaws.com", true, &yes, "b", "us-east-1", "https://s3.amazonaws.com/b/k%20x"},
	} {
		cl, err := New(Config{Endpoint: c.endpoint, Secure: c.secure, PathStyle: c.path})
		if err != nil {
			t.Fatal(err)
		}
		if got := cl.url(c.bucket, "k x", c.region).String(); got != c.want {
			t.Errorf("%s %s (path %v) = %s, want %s", c.endpoint, c.bucket, c.path, got, c.want)
		}
	}
	for _, bad := range []string{"", "http://h", "h/p", "a@h"} {
		if _, err := New(Config{Endpoint: bad}); err == nil {
			t.Errorf("New accepted endpoint %q", bad)
		}
	}
}

// A redirect is not followed (it would go unsigned, or as a GET): a 301
// or 307 naming the bucket's region is a correction, followed once and
// remembered; one that names none is an error that says where it pointed.
func TestRedirectsAreRegionCorrections(t *testing.T) {
	t.Parallel()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("elsewhere")) }))
	t.Cleanup(other.Close)
	s, c := serve(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		switch {
		case r.URL.Path == "/nowhere/k":
			http.Redirect(w, r, other.URL+"/k", http.StatusTemporaryRedirect)
		case !strings.Contains(r.Header.Get("Authorization"), "/sa-east-1/"):
			w.Header().Set("X-Amz-Bucket-Region", "sa-east-1")
			w.Header().Set("Location", other.URL)
			w.WriteHeader(http.StatusMovedPermanently)
		case r.Method == http.MethodPut && r.ContentLength != 4:
			http.Error(w, "no body", http.StatusBadRequest)
		}
	})
	c.cfg.Region = "us-east-1" // configured, and wrong for b
	ctx := context.Background()
	for range 2 {
		if err := c.Put(ctx, "b", "k", []byte("data"), "text/plain"); err != nil {
			t.Fatalf("Put redirected to the bucket's region = %v", err)
		}
	}
	if got := strings.Join(s.requests(), "\n"); got != "PUT /b/k us-east-1\nPUT /b/k sa-east-1\nPUT /b/k sa-east-1" {
		t.Errorf("requests:\n%s", got)
	}
	_, err := c.Get(ctx, "nowhere", "k")
	if err == nil || !strings.Contains(err.Error(), "redirected to "+other.URL) {
		t.Errorf("Get redirected elsewhere = %v", err)
	}
}

// A listing the server says goes on, without a token to go on from, is an
// error, not a silently short list.
func TestTruncatedListingWithoutToken(t *testing.T) {
	t.Parallel()
	_, c := serve(t, func(w http.ResponseWriter, _ *http.Request, _ int) {
		_, _ = w.Write([]byte(`<ListBucketResult><IsTruncated>true</IsTruncated><Contents><Key>a</Key></Contents></ListBucketResult>`))
	})
	c.cfg.Region = "us-east-1"
	n := 0
	err := c.List(context.Background(), "b", "", func(Object) bool { n++; return true })
	if err == nil || !strings.Contains(err.Error(), "continuation token") || n != 1 {
		t.Errorf("List = %v after %d objects", err, n)
	}
}

// A server failing for the moment when asked for a bucket's region is
// asked again after a wait, and its failure is not remembered as an answer.
func TestRegionQuestionRetriedNotCached(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	healthy := false
	s, c := serve(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		mu.Lock()
		ok := healthy
		mu.Unlock()
		switch {
		case !ok:
			xmlError(w, http.StatusServiceUnavailable, "SlowDown", "")
		case r.URL.RawQuery == "location=":
			_, _ = w.Write([]byte(`<LocationConstraint>eu-north-1</LocationConstraint>`))
		}
	})
	ctx := context.Background()
	if _, err := c.Get(ctx, "b", "k"); Code(err) != "SlowDown" {
		t.Fatalf("Get while the server is busy = %v", err)
	}
	if n := len(s.requests()); n != attempts {
		t.Errorf("%d questions of the region, want %d", n, attempts)
	}
	mu.Lock()
	healthy = true
	mu.Unlock()
	if _, err := c.Get(ctx, "b", "k"); err != nil {
		t.Fatal(err)
	}
	reqs := s.requests()
	if got := strings.Join(reqs[attempts:], "\n"); got != "GET /b/?location= us-east-1\nGET /b/k eu-north-1" {
		t.Errorf("requests once the server is back:\n%s", got)
	}
}

// A regional AWS endpoint whose bucket will not say its region signs for
// the endpoint's region and sends there, not to us-east-1's endpoint.
func TestRefusedRegionQuestionKeepsTheRegionalEndpoint(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		region := ""
		if _, after, ok := strings.Cut(r.Header.Get("Authorization"), "/"); ok {
			region = strings.Split(after, "/")[1]
		}
		mu.Lock()
		seen = append(seen, r.Host+" "+r.URL.RequestURI()+" "+region)
		mu.Unlock()
		if r.URL.RawQuery == "location=" {
			xmlError(w, http.StatusForbidden, "AccessDenied", "")
		}
	}))
	t.Cleanup(srv.Close)
	addr := strings.TrimPrefix(srv.URL, "http://")
	tr := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr) // every host name is this server
	}}
	c, err := New(Config{Endpoint: "s3.eu-west-1.amazonaws.com", Credentials: Credentials{AccessKey: "a", SecretKey: "s"},
		HTTPClient: &http.Client{Transport: tr}})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Put(context.Background(), "b", "k", []byte("v"), "text/plain"); err != nil {
		t.Fatal(err)
	}
	want := "b.s3.eu-west-1.amazonaws.com /?location= us-east-1\nb.s3.eu-west-1.amazonaws.com /k eu-west-1"
	if got := strings.Join(seen, "\n"); got != want {
		t.Errorf("requests:\n%s\nwant\n%s", got, want)
	}
}

func TestEndpointRegion(t *testing.T) {
	t.Parallel()
	for endpoint, want := range map[string]string{
		"s3.eu-west-1.amazonaws.com": "eu-west-1", "s3.eu-west-1.amazonaws.com:443": "eu-west-1", "s3.amazonaws.com": "",
		"s3.dualstack.us-east-1.amazonaws.com": "", "s3-fips.us-east-1.amazonaws.com": "", "minio:9000": "",
	} {
		if got := endpointRegion(endpoint); got != want {
			t.Errorf("endpointRegion(%q) = %q, want %q", endpoint, got, want)
		}
	}
}

// Any redirect is a refusal (none is followed); a 308 naming the region is
// a correction like a 301, and a redirect without a Location names none.
func TestEveryRedirectIsARefusal(t *testing.T) {
	t.Parallel()
	_, c := serve(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		switch {
		case r.URL.Path == "/b/bare":
			w.WriteHeader(http.StatusFound)
		case !strings.Contains(r.Header.Get("Authorization"), "/ca-central-1/"):
			w.Header().Set("X-Amz-Bucket-Region", "ca-central-1")
			w.WriteHeader(http.StatusPermanentRedirect)
		}
	})
	c.cfg.Region = "us-east-1"
	if _, err := c.Get(context.Background(), "b", "bare"); err == nil || strings.Contains(err.Error(), "redirected to") {
		t.Errorf("Get answered 302 without a Location = %v", err)
	}
	if _, err := c.Get(context.Background(), "b", "k"); err != nil {
		t.Errorf("Get answered 308 naming the region = %v", err)
	}
}

// An object stored gzipped (Content-Encoding: gzip) comes back as stored:
// the client asks for no compression and undoes none.
func TestGetReturnsTheStoredBytes(t *testing.T) {
	t.Parallel()
	stored := []byte{0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00}
	_, c := serve(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		if r.Header.Get("Accept-Encoding") != "" {
			http.Error(w, "asked for "+r.Header.Get("Accept-Encoding"), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Encoding", "gzip")
		_, _ = w.Write(stored)
	})
	c.cfg.Region = "us-east-1"
	got, err := c.Get(context.Background(), "b", "k.gz")
	if err != nil || string(got) != string(stored) {
		t.Errorf("Get = %x, %v; want the stored %x", got, err, stored)
	}
}
