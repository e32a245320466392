package netfail

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestTransient(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()
	get := func(c *http.Client, url string) error {
		resp, err := c.Get(url) //nolint:noctx // the client's own timeout is what is tested
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	refused := get(http.DefaultClient, closed)
	slow := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { time.Sleep(time.Second) }))
	defer slow.Close()
	timedOut := get(&http.Client{Timeout: 50 * time.Millisecond}, slow.URL)
	for err, want := range map[error]bool{
		refused:                            true,
		timedOut:                           true,
		fmt.Errorf("read: %w", io.EOF):     true,
		io.ErrUnexpectedEOF:                true,
		context.Canceled:                   false,
		x509.UnknownAuthorityError{}:       false,
		errors.New("unsupported protocol"): false,
	} {
		if got := Transient(err); got != want {
			t.Errorf("Transient(%v) = %v, want %v", err, got, want)
		}
	}
}

func TestWait(t *testing.T) {
	t.Parallel()
	if !Wait(context.Background(), time.Millisecond) {
		t.Error("Wait of 1 ms with a live context = false")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	if Wait(ctx, time.Minute) || time.Since(start) > 5*time.Second {
		t.Errorf("Wait of a minute with a cancelled context returned true or took %v", time.Since(start))
	}
}
