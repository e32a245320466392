// Package secrets encrypts values at rest (connection URIs, with their
// passwords and extras) with AES-256-GCM, as Airflow does with its Fernet
// key. A Box holds a key ring: the first key seals, every key opens, so
// that rows sealed under an older key stay readable while a rotation rolls
// out. Sealed text is "weir-aes256gcm:v1:<key id>:<base64 nonce+ciphertext>";
// text without that prefix is a value stored before encryption existed and
// is returned as it is. Tighten keeps the files that hold secrets (the
// database, the key files, $WEIR_HOME) readable by their owner only.
package secrets

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// KeyBytes is the length of one key (AES-256).
const KeyBytes = 32

// prefix starts every sealed value.
const prefix = "weir-aes256gcm:v1:"

// ErrUnknownKey means a value was sealed under a key the ring lacks.
var ErrUnknownKey = errors.New("value was encrypted with a key that is not in the key file")

// ErrUndecryptable is wrapped by every error of a stored value that does
// not decrypt (ErrUnknownKey, a tampered or malformed value): the row is
// there, its value cannot be read here.
var ErrUndecryptable = errors.New("cannot decrypt")

// Box seals and opens values with a key ring. It is safe for concurrent use.
type Box struct {
	ring atomic.Pointer[ring]
	// reload, when set (Reloading), reads the key ring again: a value
	// sealed under a key the ring lacks may be under a key added to the
	// file since (a rotation on this machine by another process).
	reload     func() ([][]byte, error)
	mu         sync.Mutex // over reloads
	lastReload time.Time
}

// ring is a Box's keys.
type ring struct {
	ids   []string // key ids, primary first
	aeads map[string]cipher.AEAD
	keys  [][]byte // as ids
}

// reloadEvery bounds how often a Box reads its keys again: rows sealed
// under a key no file holds any more are each looked up, and each would
// read the file.
const reloadEvery = time.Second

// ParseKeys reads a key file's content: one key per line as 64 hex
// characters; the first line is the primary (sealing) key; blank lines and
// lines starting with # are ignored.
func ParseKeys(text string) ([][]byte, error) {
	var keys [][]byte
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, err := hex.DecodeString(line)
		if err != nil || len(k) != KeyBytes {
			return nil, fmt.Errorf("key file line %d: a key is %d hex characters (%d random bytes)", i+1, 2*KeyBytes, KeyBytes)
		}
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		return nil, errors.New("key file holds no key")
	}
	return keys, nil
}

// NewKey returns a new random key as a key file line (hex).
func NewKey() string {
	k := make([]byte, KeyBytes)
	_, _ = rand.Read(k) // crypto/rand.Read never fails (it aborts the program instead)
	return hex.EncodeToString(k)
}

// New returns a Box over keys, the first of which seals.
func New(keys [][]byte) (*Box, error) {
	r, err := newRing(keys)
	if err != nil {
		return nil, err
	}
	b := &Box{}
	b.ring.Store(r)
	return b, nil
}

// Reloading returns a Box over keys (what load returned at first) that
// calls load (at most once a second) when a value was sealed under a key it lacks, so
// that a process reads what another sealed after adding a key to the file
// (`weir connections rotate-key`) without a restart. The keys read are
// added to those the box has (a key removed from the file still opens
// here until the process restarts); a load that fails leaves them as
// they were.
func Reloading(keys [][]byte, load func() ([][]byte, error)) (*Box, error) {
	b, err := New(keys)
	if err != nil {
		return nil, err
	}
	b.reload = load
	return b, nil
}

func newRing(keys [][]byte) (*ring, error) {
	if len(keys) == 0 {
		return nil, errors.New("a secrets box needs at least one key")
	}
	r := &ring{aeads: map[string]cipher.AEAD{}}
	for i, k := range keys {
		if len(k) != KeyBytes {
			return nil, fmt.Errorf("key %d is %d bytes, want %d", i+1, len(k), KeyBytes)
		}
		block, err := aes.NewCipher(k)
		if err != nil {
			return nil, fmt.Errorf("key %d: %w", i+1, err)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("key %d: %w", i+1, err)
		}
		id := KeyID(k)
		if _, dup := r.aeads[id]; dup {
			continue
		}
		r.ids = append(r.ids, id)
		r.aeads[id] = aead
		r.keys = append(r.keys, k)
	}
	return r, nil
}

// aead returns the cipher of key id, reloading the ring once when it lacks
// it (Reloading).
func (b *Box) aead(id string) (cipher.AEAD, bool) {
	if aead, ok := b.ring.Load().aeads[id]; ok || b.reload == nil {
		return aead, ok
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if aead, ok := b.ring.Load().aeads[id]; ok { // another call reloaded it
		return aead, true
	}
	if time.Since(b.lastReload) < reloadEvery {
		return nil, false
	}
	b.lastReload = time.Now()
	keys, err := b.reload()
	if err != nil {
		return nil, false
	}
	// The file's keys first (its first seals), then those it no longer
	// holds: what this process sealed before stays readable here.
	r, err := newRing(append(keys, b.ring.Load().keys...))
	if err != nil {
		return nil, false
	}
	b.ring.Store(r)
	aead, ok := r.aeads[id]
	return aead, ok
}

// KeyID names a key without revealing it: the first 8 hex characters of
// its SHA-256.
func KeyID(key []byte) string {
	sum := sha256.Sum256(key)
	return hex.EncodeToString(sum[:4])
}

// PrimaryID is the id of the key that seals.
func (b *Box) PrimaryID() string { return b.ring.Load().ids[0] }

// Seal encrypts plain under the primary key; context binds the sealed value
// to its place (a connection id), so it cannot be moved to another row.
func (b *Box) Seal(plain, context string) string {
	r := b.ring.Load()
	id := r.ids[0]
	aead := r.aeads[id]
	nonce := make([]byte, aead.NonceSize())
	_, _ = rand.Read(nonce) // crypto/rand.Read never fails
	out := aead.Seal(nonce, nonce, []byte(plain), []byte(context))
	return prefix + id + ":" + base64.RawStdEncoding.EncodeToString(out)
}

// IsSealed reports whether stored text is a sealed value.
func IsSealed(stored string) bool { return strings.HasPrefix(stored, prefix) }

// SealedWith returns the id of the key stored text was sealed with ("" for
// a value stored in plain text).
func SealedWith(stored string) string {
	rest, ok := strings.CutPrefix(stored, prefix)
	if !ok {
		return ""
	}
	id, _, _ := strings.Cut(rest, ":")
	return id
}

// Open decrypts stored text sealed with context under any key of the ring;
// text stored before encryption (no prefix) is returned unchanged.
func (b *Box) Open(stored, context string) (string, error) {
	rest, ok := strings.CutPrefix(stored, prefix)
	if !ok {
		return stored, nil
	}
	id, enc, ok := strings.Cut(rest, ":")
	if !ok {
		return "", errors.New("sealed value is malformed")
	}
	aead, ok := b.aead(id)
	if !ok {
		return "", fmt.Errorf("key id %s: %w", id, ErrUnknownKey)
	}
	raw, err := base64.RawStdEncoding.DecodeString(enc)
	if err != nil || len(raw) < aead.NonceSize() {
		return "", errors.New("sealed value is malformed")
	}
	plain, err := aead.Open(nil, raw[:aead.NonceSize()], raw[aead.NonceSize():], []byte(context))
	if err != nil {
		return "", fmt.Errorf("sealed value does not decrypt with key %s (tampered, or moved from another row)", id)
	}
	return string(plain), nil
}
