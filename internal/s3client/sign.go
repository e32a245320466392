package s3client

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"sort"
	"strings"
	"time"
)

// AWS Signature Version 4, as S3 takes it in the Authorization header
// (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv-create-signed-request.html).

// emptySHA256 is the hash of an empty payload.
const emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// Credentials sign requests; the zero value sends them anonymously.
type Credentials struct {
	AccessKey, SecretKey string
	SessionToken         string // temporary credentials' token, sent as X-Amz-Security-Token
}

// sign adds the date, payload hash, token and Authorization headers to req
// for service in region at now; payloadHash is the hex SHA-256 of the body.
// Anonymous credentials add only the payload hash.
func (c Credentials) sign(req *http.Request, service, region, payloadHash string, now time.Time) {
	req.Header.Set("X-Amz-Content-Sha256", payloadHash)
	if c.AccessKey == "" {
		return
	}
	amzDate := now.UTC().Format("20060102T150405Z")
	req.Header.Set("X-Amz-Date", amzDate)
	if c.SessionToken != "" {
		req.Header.Set("X-Amz-Security-Token", c.SessionToken)
	}
	names := []string{"host"}
	for name := range req.Header {
		if l := strings.ToLower(name); !unsigned[l] {
			names = append(names, l)
		}
	}
	sort.Strings(names)
	var canon strings.Builder
	for _, n := range names {
		v := req.Host
		if v == "" {
			v = req.URL.Host
		}
		if n != "host" {
			v = strings.Join(req.Header.Values(n), ",")
		}
		canon.WriteString(n + ":" + strings.Join(strings.Fields(v), " ") + "\n")
	}
	signed := strings.Join(names, ";")
	request := strings.Join([]string{req.Method, req.URL.EscapedPath(), canonicalQuery(req.URL.RawQuery),
		canon.String(), signed, payloadHash}, "\n")
	scope := amzDate[:8] + "/" + region + "/" + service + "/aws4_request"
	toSign := "AWS4-HMAC-SHA256\n" + amzDate + "\n" + scope + "\n" + hexSHA256([]byte(request))
	key := hmacSHA256([]byte("AWS4"+c.SecretKey), amzDate[:8])
	for _, part := range []string{region, service, "aws4_request"} {
		key = hmacSHA256(key, part)
	}
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential="+c.AccessKey+"/"+scope+
		", SignedHeaders="+signed+", Signature="+hex.EncodeToString(hmacSHA256(key, toSign)))
}

// unsigned are the headers left out of the signature: proxies and the
// HTTP client may change or add them on the way.
var unsigned = map[string]bool{"authorization": true, "user-agent": true, "content-length": true, "accept-encoding": true,
	"expect": true, "connection": true, "transfer-encoding": true, "x-amzn-trace-id": true, "host": true}

// canonicalQuery sorts an encoded query (built by encodeQuery) by name,
// then value, each pair written name=value.
func canonicalQuery(raw string) string {
	if raw == "" {
		return ""
	}
	type pair struct{ k, v string }
	var pairs []pair
	for _, p := range strings.Split(raw, "&") {
		k, v, _ := strings.Cut(p, "=")
		pairs = append(pairs, pair{k, v})
	}
	sort.Slice(pairs, func(i, j int) bool {
		return pairs[i].k < pairs[j].k || pairs[i].k == pairs[j].k && pairs[i].v < pairs[j].v
	})
	out := make([]string, len(pairs))
	for i, p := range pairs {
		out[i] = p.k + "=" + p.v
	}
	return strings.Join(out, "&")
}

// encodeQuery writes params as a query with SigV4's encoding (every byte
// but the unreserved ones escaped, a space as %20), in canonical order.
func encodeQuery(params map[string]string) string {
	var q []string
	for k, v := range params {
		q = append(q, uriEncode(k, true)+"="+uriEncode(v, true))
	}
	return canonicalQuery(strings.Join(q, "&"))
}

// uriEncode escapes every byte of s but A–Z, a–z, 0–9, '-', '.', '_', '~'
// (and '/' unless slash is set), as SigV4 and S3's paths want.
func uriEncode(s string, slash bool) string {
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' ||
			(c == '/' && !slash) {
			b.WriteByte(c)
			continue
		}
		b.WriteString("%" + string(hexDigits[c>>4]) + string(hexDigits[c&15]))
	}
	return b.String()
}

func hexSHA256(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func hmacSHA256(key []byte, data string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(data))
	return m.Sum(nil)
}
