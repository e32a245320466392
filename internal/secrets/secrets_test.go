package secrets

import (
	"errors"
	"strings"
	"testing"
)

func mustBox(t *testing.T, keys ...string) *Box {
	t.Helper()
	parsed, err := ParseKeys(strings.Join(keys, "\n"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(parsed)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSealOpen(t *testing.T) {
	t.Parallel()
	oldKey, newKey := NewKey(), NewKey()
	old := mustBox(t, oldKey)
	uri := "postgres://etl:s3cret@db:5432/dw?sslmode=require"
	sealed := old.Seal(uri, "warehouse")
	if strings.Contains(sealed, "s3cret") || !IsSealed(sealed) || SealedWith(sealed) != old.PrimaryID() {
		t.Fatalf("sealed = %q", sealed)
	}
	// One character inside the ciphertext changed (the last one may carry
	// only padding bits).
	i := len(sealed) - 8
	flip := "A"
	if sealed[i] == 'A' {
		flip = "B"
	}
	tampered := sealed[:i] + flip + sealed[i+1:]
	if again := old.Seal(uri, "warehouse"); again == sealed {
		t.Fatal("two seals of one value are equal: the nonce is not random")
	}
	for name, tc := range map[string]struct {
		box     *Box
		stored  string
		context string
		want    string
		err     string
	}{
		"same key":                {old, sealed, "warehouse", uri, ""},
		"rotated ring, old value": {mustBox(t, newKey, oldKey), sealed, "warehouse", uri, ""},
		"plain legacy value":      {old, uri, "warehouse", uri, ""},
		"key dropped":             {mustBox(t, newKey), sealed, "warehouse", "", "not in the key file"},
		"moved to another row":    {old, sealed, "other", "", "does not decrypt"},
		"tampered":                {old, tampered, "warehouse", "", "does not decrypt"},
	} {
		got, err := tc.box.Open(tc.stored, tc.context)
		if tc.err == "" && (err != nil || got != tc.want) {
			t.Errorf("%s: Open = %q, %v; want %q", name, got, err, tc.want)
		}
		if tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err) || strings.Contains(err.Error(), "s3cret")) {
			t.Errorf("%s: err = %v, want one naming %q", name, err, tc.err)
		}
	}
	_, err := mustBox(t, newKey).Open(sealed, "warehouse")
	if !errors.Is(err, ErrUnknownKey) {
		t.Errorf("dropped key: %v, want ErrUnknownKey", err)
	}
	if got := mustBox(t, newKey, oldKey).Seal(uri, "w"); SealedWith(got) != KeyID(mustHex(t, newKey)) {
		t.Error("a ring does not seal with its first key")
	}
}

// TestReloadingReadsAKeyAddedSince: a box over a key file opens a value
// sealed under a key another process added to the file after the box read
// it (a rotation), without a restart, and keeps sealing until then with
// the key it has; a key in no file is still ErrUnknownKey, and the file is
// read again at most once a second for it.
func TestReloadingReadsAKeyAddedSince(t *testing.T) {
	t.Parallel()
	oldKey, newKey := NewKey(), NewKey()
	file, reads := oldKey, 0
	first, err := ParseKeys(file)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Reloading(first, func() ([][]byte, error) { reads++; return ParseKeys(file) })
	if err != nil {
		t.Fatal(err)
	}
	file = newKey + "\n" + oldKey // rotate-key, by another process
	sealed := mustBox(t, newKey, oldKey).Seal("v", "c")
	if got, err := b.Open(sealed, "c"); err != nil || got != "v" {
		t.Fatalf("Open of a value sealed under the added key = %q, %v; want v", got, err)
	}
	if b.PrimaryID() != KeyID(mustHex(t, newKey)) {
		t.Error("after the reload the box does not seal with the file's first key")
	}
	// A key the file no longer holds still opens what this process sealed.
	oldSealed := mustBox(t, oldKey).Seal("o", "c")
	file = newKey
	if got, err := b.Open(oldSealed, "c"); err != nil || got != "o" {
		t.Errorf("a value under the key dropped from the file = %q, %v; want it read", got, err)
	}
	stray := mustBox(t, NewKey()).Seal("v", "c")
	before := reads
	for range 3 {
		if _, err := b.Open(stray, "c"); !errors.Is(err, ErrUnknownKey) {
			t.Fatalf("a key in no file: %v, want ErrUnknownKey", err)
		}
	}
	if reads-before > 1 {
		t.Errorf("three opens of a value under an unknown key read the file %d times, want at most once a second", reads-before)
	}
}

func TestParseKeysRefusesBadKeys(t *testing.T) {
	t.Parallel()
	for text, want := range map[string]string{
		"":                      "no key",
		"# only a comment\n":    "no key",
		"abcd":                  "line 1: a key is 64 hex characters",
		NewKey() + "\nnot-hex!": "line 2: a key is 64 hex characters",
	} {
		if _, err := ParseKeys(text); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseKeys(%q) = %v, want %q", text, err, want)
		}
	}
}

func mustHex(t *testing.T, line string) []byte {
	t.Helper()
	k, err := ParseKeys(line)
	if err != nil {
		t.Fatal(err)
	}
	return k[0]
}

// Names holding secrets are recognised whatever separates their words: an
// http_json watcher's X-Api-Key header was shown to every viewer.
func TestSensitiveName(t *testing.T) {
	for name, want := range map[string]bool{
		"password": true, "DB_PASSWORD": true, "X-Api-Key": true, "api-key": true, "apikey": true, "Api Key": true,
		"Authorization": true, "private-key": true, "access-token": true, "x-auth-token": true, "client_secret": true,
		"X-Request-Id": false, "Content-Type": false, "page": false, "user": false, "key": false,
	} {
		if got := SensitiveName(name); got != want {
			t.Errorf("SensitiveName(%q) = %v, want %v", name, got, want)
		}
	}
}
