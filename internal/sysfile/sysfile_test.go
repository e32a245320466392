package sysfile_test

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/weirflow/weir/internal/sysfile"
)

func TestReadFileReadsWhatOsReads(t *testing.T) {
	dir := t.TempDir()
	for _, size := range []int{0, 1, 511, 512, 513, 70_000} {
		p := filepath.Join(dir, "f")
		want := bytes.Repeat([]byte("weir"), size/4+1)[:size]
		if err := os.WriteFile(p, want, 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := sysfile.ReadFile(p)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("size %d: read %d bytes (%v), want %d", size, len(got), err, size)
		}
	}
	// A file whose size stat does not tell, as /proc's.
	got, err := sysfile.ReadFile("/proc/self/stat")
	if err != nil || !bytes.Contains(got, []byte(")")) {
		t.Fatalf("/proc/self/stat: %q, %v", got, err)
	}
}

func TestErrorsAreOsErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing")
	_, err := sysfile.ReadFile(missing)
	var pe *fs.PathError
	if !errors.Is(err, fs.ErrNotExist) || !errors.As(err, &pe) || pe.Op != "open" || pe.Path != missing {
		t.Fatalf("ReadFile of a missing file: %v, want an open *fs.PathError naming it that is fs.ErrNotExist", err)
	}
	if _, err := sysfile.ReadFile(t.TempDir()); err == nil || !errors.As(err, &pe) || pe.Op != "read" {
		t.Fatalf("ReadFile of a folder: %v, want a read *fs.PathError", err)
	}
	if _, err := sysfile.OpenFile(missing, os.O_WRONLY, 0); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("OpenFile without O_CREATE: %v, want fs.ErrNotExist", err)
	}
}

func TestOpenFileOpensAsOsDoes(t *testing.T) {
	p := filepath.Join(t.TempDir(), "log")
	f, err := sysfile.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY|os.O_APPEND, 0o640)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sysfile.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o640); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("O_EXCL over an existing file: %v, want fs.ErrExist", err)
	}
	flags, err := unix.FcntlInt(f.Fd(), unix.F_GETFD, 0)
	if err != nil || flags&unix.FD_CLOEXEC == 0 {
		t.Fatalf("descriptor flags %#x (%v): want close on exec", flags, err)
	}
	for _, s := range []string{"one\n", "two\n"} {
		if _, err := f.WriteString(s); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.WriteAt([]byte("x"), 0); err == nil {
		t.Fatal("WriteAt on a file opened for appending succeeded; os refuses it")
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil || fi.Mode().Perm() != 0o640&^umask() {
		t.Fatalf("mode %v (%v), want %v", fi.Mode().Perm(), err, fs.FileMode(0o640&^umask()))
	}
	if b, _ := os.ReadFile(p); string(b) != "one\ntwo\n" {
		t.Fatalf("content %q", b)
	}
}

func umask() fs.FileMode {
	m := unix.Umask(0)
	unix.Umask(m)
	return fs.FileMode(m)
}
