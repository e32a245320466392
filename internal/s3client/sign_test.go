package s3client

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// The examples of AWS's S3 documentation ("Signature calculations for the
// Authorization header: transferring payload in a single chunk"), with
// their published signatures.
func TestSignatureMatchesAWSExamples(t *testing.T) {
	t.Parallel()
	creds := Credentials{AccessKey: "AKIAIOSFODNN7EXAMPLE", SecretKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}
	at := time.Date(2013, 5, 24, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name, method, url string
		header            map[string]string
		payload           string
		signed, signature string
	}{
		{"GET object", http.MethodGet, "https://examplebucket.s3.amazonaws.com/test.txt", map[string]string{"Range": "bytes=0-9"},
			emptySHA256, "host;range;x-amz-content-sha256;x-amz-date", "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"},
		{"PUT object", http.MethodPut, "https://examplebucket.s3.amazonaws.com/test$file.text",
			map[string]string{"Date": "Fri, 24 May 2013 00:00:00 GMT", "X-Amz-Storage-Class": "REDUCED_REDUNDANCY"},
			hexSHA256([]byte("Welcome to Amazon S3.")), "date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class",
			"98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd"},
		{"GET bucket lifecycle", http.MethodGet, "https://examplebucket.s3.amazonaws.com/?lifecycle", nil,
			emptySHA256, "host;x-amz-content-sha256;x-amz-date", "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543"},
		{"list objects", http.MethodGet, "https://examplebucket.s3.amazonaws.com/?max-keys=2&prefix=J", nil,
			emptySHA256, "host;x-amz-content-sha256;x-amz-date", "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7"},
	} {
		req, err := http.NewRequest(c.method, c.url, nil)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(c.url, "$") {
			req.URL.RawPath = "/" + uriEncode("test$file.text", false)
		}
		for k, v := range c.header {
			req.Header.Set(k, v)
		}
		creds.sign(req, "s3", "us-east-1", c.payload, at)
		want := "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, SignedHeaders=" + c.signed +
			", Signature=" + c.signature
		if got := req.Header.Get("Authorization"); got != want {
			t.Errorf("%s: Authorization\n%s\nwant\n%s", c.name, got, want)
		}
	}
}

// Anonymous credentials send no signature; a session token is sent and
// signed.
func TestAnonymousAndSessionCredentials(t *testing.T) {
	t.Parallel()
	req, _ := http.NewRequest(http.MethodGet, "http://h/b/k", nil)
	Credentials{}.sign(req, "s3", "us-east-1", emptySHA256, time.Now())
	if req.Header.Get("Authorization") != "" || req.Header.Get("X-Amz-Content-Sha256") != emptySHA256 {
		t.Errorf("anonymous request headers %v", req.Header)
	}
	req, _ = http.NewRequest(http.MethodGet, "http://h/b/k", nil)
	Credentials{AccessKey: "a", SecretKey: "s", SessionToken: "tok"}.sign(req, "s3", "eu-west-1", emptySHA256, time.Now())
	if req.Header.Get("X-Amz-Security-Token") != "tok" || !strings.Contains(req.Header.Get("Authorization"), "x-amz-security-token") ||
		!strings.Contains(req.Header.Get("Authorization"), "/eu-west-1/s3/aws4_request") {
		t.Errorf("session request headers %v", req.Header)
	}
}

func TestURIEncode(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"a/b c+d=é~._-": "a/b%20c%2Bd%3D%C3%A9~._-",
		"x?y#z%":        "x%3Fy%23z%25",
	} {
		if got := uriEncode(in, false); got != want {
			t.Errorf("uriEncode(%q) = %q, want %q", in, got, want)
		}
	}
	if got := uriEncode("a/b", true); got != "a%2Fb" {
		t.Errorf("uriEncode with slash = %q", got)
	}
	// Sorted by name, then value: a name that begins another comes first.
	if got := encodeQuery(map[string]string{"prefix-a": "y", "prefix": "x z", "location": ""}); got != "location=&prefix=x%20z&prefix-a=y" {
		t.Errorf("encodeQuery = %q", got)
	}
}
