// Package s3client is the small S3 client Weir needs: put, get and delete
// an object, and list a bucket, against AWS S3 or any S3-compatible server
// (MinIO, SeaweedFS, Ceph, R2, Garage), signed with AWS Signature Version 4.
// It replaced minio-go, whose package initialisation cost every weir
// process several milliseconds of its start (docs/adr/0038-no-protobuf-runtime.md).
package s3client

import (
	"bytes"
	"cmp"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/weirflow/weir/internal/netfail"
)

// Config locates a server.
type Config struct {
	Endpoint string // host[:port], no scheme
	Secure   bool   // https
	// Region signs the requests; "" = ask the server for each bucket's
	// (GET ?location), us-east-1 when it will not say.
	Region string
	// PathStyle puts the bucket in the path (http://host/bucket/key); false
	// in the host name (http://bucket.host/key); nil chooses: the host name
	// for AWS (s3.amazonaws.com and its regional endpoints) when the bucket
	// name allows it, the path elsewhere.
	PathStyle   *bool
	Credentials Credentials
	// HTTPClient sends the requests; nil = a client of its own.
	HTTPClient *http.Client
}

// Client sends S3 requests. Safe for concurrent use.
type Client struct {
	cfg  Config
	http *http.Client

	mu      sync.Mutex
	regions map[string]string // bucket → region, asked of the server
}

// New returns a client for cfg; it does not contact the server.
func New(cfg Config) (*Client, error) {
	if cfg.Endpoint == "" || strings.ContainsAny(cfg.Endpoint, "/?#@ ") {
		return nil, fmt.Errorf("S3 endpoint %q must be host[:port]", cfg.Endpoint)
	}
	hc := &http.Client{}
	if cfg.HTTPClient != nil {
		*hc = *cfg.HTTPClient
	} else {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.ResponseHeaderTimeout = time.Minute // a server that takes a request and never answers
		tr.MaxIdleConnsPerHost = 16
		tr.DisableCompression = true // an object stored gzipped comes back as stored
		hc.Transport = tr
	}
	// A redirect would be followed without the signature (another host) or
	// as a GET without the body: the answer is read as a refusal instead,
	// whose region do follows.
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &Client{cfg: cfg, http: hc, regions: map[string]string{}}, nil
}

// Object is one entry of a listing.
type Object struct {
	Key          string
	Size         int64
	ETag         string // as the server sent it, quotes included
	LastModified time.Time
}

// Error is a refusal from the server: its HTTP status and S3 error code
// (NoSuchKey, NoSuchBucket, AccessDenied, …).
type Error struct {
	Status    int
	Code      string
	Message   string
	Region    string // the bucket's region, when the server says the request named another
	RequestID string
}

func (e *Error) Error() string {
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(e.Status)
	}
	return fmt.Sprintf("%s (HTTP %d): %s", e.Code, e.Status, msg)
}

// Code returns the S3 error code err carries, or "".
func Code(err error) string {
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Code
	}
	return ""
}

// Put stores data as the object key of bucket, in one request (S3 takes up
// to 5 GiB so).
func (c *Client) Put(ctx context.Context, bucket, key string, data []byte, contentType string) error {
	h := http.Header{}
	h.Set("Content-Type", contentType)
	resp, err := c.do(ctx, request{method: http.MethodPut, bucket: bucket, key: key, header: h, body: data})
	if err != nil {
		return err
	}
	return resp.Body.Close()
}

// Get returns the object key of bucket.
func (c *Client) Get(ctx context.Context, bucket, key string) ([]byte, error) {
	resp, err := c.do(ctx, request{method: http.MethodGet, bucket: bucket, key: key})
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("read object %q: %w", key, err)
	}
	return data, nil
}

// Delete removes the object key of bucket; an absent object is no error.
func (c *Client) Delete(ctx context.Context, bucket, key string) error {
	resp, err := c.do(ctx, request{method: http.MethodDelete, bucket: bucket, key: key})
	if err != nil {
		if Code(err) == "NoSuchKey" {
			return nil
		}
		return err
	}
	return resp.Body.Close()
}

// List calls fn with each object of bucket whose key starts with prefix,
// in key order (the server's), page after page, until fn returns false.
func (c *Client) List(ctx context.Context, bucket, prefix string, fn func(Object) bool) error {
	token := ""
	for {
		q := map[string]string{"list-type": "2", "encoding-type": "url", "prefix": prefix}
		if token != "" {
			q["continuation-token"] = token
		}
		resp, err := c.do(ctx, request{method: http.MethodGet, bucket: bucket, query: q})
		if err != nil {
			return err
		}
		var page struct {
			Contents []struct {
				Key          string
				Size         int64
				ETag         string
				LastModified time.Time
			}
			IsTruncated           bool
			NextContinuationToken string
			EncodingType          string
		}
		err = xml.NewDecoder(resp.Body).Decode(&page)
		resp.Body.Close()
		if err != nil {
			return fmt.Errorf("list bucket %q: read the answer: %w", bucket, err)
		}
		for _, o := range page.Contents {
			key := o.Key
			if page.EncodingType == "url" {
				if key, err = url.QueryUnescape(o.Key); err != nil {
					return fmt.Errorf("list bucket %q: key %q: %w", bucket, o.Key, err)
				}
			}
			if !fn(Object{Key: key, Size: o.Size, ETag: o.ETag, LastModified: o.LastModified}) {
				return nil
			}
		}
		if !page.IsTruncated {
			return nil
		}
		if page.NextContinuationToken == "" {
			return fmt.Errorf("list bucket %q: the server says the listing goes on but gives no continuation token "+
				"(does it implement ListObjectsV2?)", bucket)
		}
		token = page.NextContinuationToken
	}
}

// request is one S3 call: a bucket (and key) to address, a query, headers
// and a body.
type request struct {
	method      string
	bucket, key string
	query       map[string]string
	header      http.Header
	body        []byte
	// endpointOnly sends the request to the configured endpoint whatever
	// region it is signed for (the question of a bucket's region).
	endpointOnly bool
}

// attempts and firstWait bound the retries of a request the server could
// not serve for the moment (5xx, SlowDown) or that found no connection.
const (
	attempts  = 4
	firstWait = 200 * time.Millisecond
)

// do sends r signed for its bucket's region, retrying what may pass, and
// returns the answer of a request that succeeded; its body is the
// caller's to close. A refusal that names the bucket's region is followed
// once, there. A refusal is an *Error.
func (c *Client) do(ctx context.Context, r request) (*http.Response, error) {
	region, err := c.region(ctx, r.bucket)
	if err != nil {
		return nil, err
	}
	resp, err := c.sendRetrying(ctx, r, region)
	if e, ok := errors.AsType[*Error](err); ok && e.Region != "" && e.Region != region {
		c.setRegion(r.bucket, e.Region) // the server named the bucket's region: sign for it (and send there)
		resp, err = c.sendRetrying(ctx, r, e.Region)
	}
	return resp, err
}

// sendRetrying sends r until it succeeds, fails for good, or attempts are
// spent, waiting firstWait and then twice as long before each try.
func (c *Client) sendRetrying(ctx context.Context, r request, region string) (*http.Response, error) {
	wait := firstWait
	for attempt := 1; ; attempt++ {
		resp, err := c.send(ctx, r, region)
		if err == nil || attempt == attempts || !retryable(err) || !netfail.Wait(ctx, wait) {
			return resp, err
		}
		wait *= 2
	}
}

// send makes one request.
func (c *Client) send(ctx context.Context, r request, region string) (*http.Response, error) {
	hostRegion := region
	if r.endpointOnly {
		hostRegion = ""
	}
	u := c.url(r.bucket, r.key, hostRegion)
	u.RawQuery = encodeQuery(r.query)
	req, err := http.NewRequestWithContext(ctx, r.method, u.String(), bytes.NewReader(r.body))
	if err != nil {
		return nil, err
	}
	if len(r.body) == 0 {
		req.Body, req.GetBody = http.NoBody, nil
	}
	for k, v := range r.header {
		req.Header[k] = v
	}
	hash := emptySHA256
	if len(r.body) > 0 {
		hash = hexSHA256(r.body)
	}
	c.cfg.Credentials.sign(req, "s3", region, hash, time.Now())
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	return nil, readError(resp, r.key)
}

// readError reads the server's XML error; a bodiless 404 (an answer to
// HEAD, or a server that sends none) is NoSuchKey for an object and
// NoSuchBucket for a bucket.
func readError(resp *http.Response, key string) error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	e := &Error{Status: resp.StatusCode, RequestID: resp.Header.Get("X-Amz-Request-Id")}
	var x struct {
		Code, Message, Region, RequestID string
	}
	if xml.Unmarshal(body, &x) == nil {
		e.Code, e.Message, e.Region = x.Code, x.Message, x.Region
		if x.RequestID != "" {
			e.RequestID = x.RequestID
		}
	}
	redirect := resp.StatusCode/100 == 3 ||
		e.Code == "AuthorizationHeaderMalformed" || e.Code == "PermanentRedirect" || e.Code == "TemporaryRedirect"
	if r := resp.Header.Get("X-Amz-Bucket-Region"); e.Region == "" && r != "" && redirect {
		e.Region = r
	}
	if e.Code == "" {
		switch {
		case resp.StatusCode == http.StatusNotFound && key != "":
			e.Code = "NoSuchKey"
		case resp.StatusCode == http.StatusNotFound:
			e.Code = "NoSuchBucket"
		case resp.StatusCode == http.StatusForbidden:
			e.Code = "AccessDenied"
		default:
			e.Code = strings.ReplaceAll(http.StatusText(resp.StatusCode), " ", "")
		}
	}
	if loc := resp.Header.Get("Location"); redirect && e.Region == "" && loc != "" {
		e.Message += " (redirected to " + loc + ": set the bucket's region, or the endpoint it names)"
	}
	return e
}

// retryable says whether a request that failed with err may pass later:
// the server was busy or failing (5xx, SlowDown, RequestTimeout), or the
// connection was refused, reset or timed out.
func retryable(err error) bool {
	if e, ok := errors.AsType[*Error](err); ok {
		switch e.Status {
		case http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout,
			http.StatusTooManyRequests:
			return true
		}
		return e.Code == "SlowDown" || e.Code == "RequestTimeout"
	}
	return netfail.Transient(err)
}

// url addresses bucket (and key) in the path or in the host name, at the
// endpoint of region ("" = the configured endpoint).
func (c *Client) url(bucket, key, region string) *url.URL {
	scheme := "http"
	if c.cfg.Secure {
		scheme = "https"
	}
	host := awsRegionalHost(c.cfg.Endpoint, region)
	u := &url.URL{Scheme: scheme, Host: host, Path: "/", RawPath: "/"}
	if bucket == "" {
		return u
	}
	if c.pathStyle(bucket) {
		u.Path, u.RawPath = "/"+bucket+"/", "/"+bucket+"/"
	} else {
		u.Host = bucket + "." + host
	}
	u.Path += key
	u.RawPath += uriEncode(key, false)
	return u
}

// awsEndpoint says whether endpoint (host[:port]) is one of AWS S3's: the
// global s3.amazonaws.com, a regional s3.REGION.amazonaws.com, or a special
// one (s3-fips…, s3.dualstack…, s3-accelerate…, s3-REGION of old).
func awsEndpoint(endpoint string) bool {
	host := hostOf(endpoint)
	return (strings.HasPrefix(host, "s3.") || strings.HasPrefix(host, "s3-")) && strings.HasSuffix(host, ".amazonaws.com")
}

// endpointRegion is the region a plain regional AWS endpoint
// (s3.REGION.amazonaws.com) names, else "".
func endpointRegion(endpoint string) string {
	label, ok := strings.CutSuffix(strings.TrimPrefix(hostOf(endpoint), "s3."), ".amazonaws.com")
	if !ok || !strings.HasPrefix(hostOf(endpoint), "s3.") || label == "" || strings.Contains(label, ".") {
		return ""
	}
	return label
}

// awsRegionalHost is the endpoint to send region's requests to: the global
// endpoint, or a plain regional one of another region, is replaced by
// region's own (its port kept), since AWS redirects requests for a bucket
// to the bucket's region. Other endpoints are kept as configured: a FIPS,
// dual-stack or accelerated endpoint is chosen on purpose.
func awsRegionalHost(endpoint, region string) string {
	host := hostOf(endpoint)
	if region == "" || (host != "s3.amazonaws.com" && endpointRegion(endpoint) == "") {
		return endpoint
	}
	if host == "s3.amazonaws.com" && region == "us-east-1" || endpointRegion(endpoint) == region {
		return endpoint
	}
	want := "s3." + region + ".amazonaws.com"
	if _, port, err := net.SplitHostPort(endpoint); err == nil {
		return net.JoinHostPort(want, port)
	}
	return want
}

// hostOf is endpoint's host, without a port.
func hostOf(endpoint string) string {
	if host, _, err := net.SplitHostPort(endpoint); err == nil {
		return host
	}
	return endpoint
}

// pathStyle says whether requests to bucket name it in the path.
func (c *Client) pathStyle(bucket string) bool {
	if c.cfg.PathStyle != nil {
		return *c.cfg.PathStyle
	}
	// A bucket name with dots breaks the certificate of bucket.s3.amazonaws.com.
	return !awsEndpoint(c.cfg.Endpoint) || (c.cfg.Secure && strings.Contains(bucket, "."))
}

// region returns the region to sign bucket's requests for: one a server
// named in a refusal (cached), else the configured one, else the server's
// answer to GET ?location (cached), us-east-1 when it refuses to say.
func (c *Client) region(ctx context.Context, bucket string) (string, error) {
	c.mu.Lock()
	r, ok := c.regions[bucket]
	c.mu.Unlock()
	if ok {
		return r, nil
	}
	if c.cfg.Region != "" || bucket == "" {
		return cmp.Or(c.cfg.Region, "us-east-1"), nil
	}
	loc := request{method: http.MethodGet, bucket: bucket, query: map[string]string{"location": ""}, endpointOnly: true}
	resp, err := c.sendRetrying(ctx, loc, "us-east-1")
	switch e, refused := errors.AsType[*Error](err); {
	case err == nil:
		var x struct {
			Location string `xml:",chardata"`
		}
		derr := xml.NewDecoder(resp.Body).Decode(&x)
		resp.Body.Close()
		switch l := strings.TrimSpace(x.Location); {
		case derr != nil || l == "":
			r = "us-east-1"
		case l == "EU":
			r = "eu-west-1"
		default:
			r = l
		}
	case !refused || retryable(err) || e.Code == "NoSuchBucket":
		return "", err // no answer, a server failing for now (nothing cached), or no bucket
	default:
		// Refused (anonymous requests, a policy without GetBucketLocation)
		// or not implemented: sign for the region the refusal names, else
		// the configured endpoint's, else us-east-1; do follows a later
		// correction.
		r = cmp.Or(e.Region, endpointRegion(c.cfg.Endpoint), "us-east-1")
	}
	c.setRegion(bucket, r)
	return r, nil
}

func (c *Client) setRegion(bucket, region string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.regions[bucket] = region
}
