// Package buildid reads the Go build ID of the running program: a hash of
// everything that went into the binary (sources, dependencies, toolchain,
// flags), so two binaries share it only when they were built from the same
// inputs.
package buildid

import (
	"bytes"
	"debug/elf"
	"os"
	"sync"
)

// Self returns the running program's Go build ID, or "" when it cannot be
// read: not an ELF binary (macOS, Windows), or one linked without an ID
// (-ldflags=-buildid=). It reads the executable once.
var Self = sync.OnceValue(func() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	id, _ := Read(exe)
	return id
})

// Read returns the Go build ID of the ELF binary at path ("" when it has
// none): the description of its Go build ID note.
func Read(path string) (string, error) {
	f, err := elf.Open(path)
	if err != nil {
		return "", err
	}
	defer func() { _ = f.Close() }() // read only
	sec := f.Section(".note.go.buildid")
	if sec == nil {
		return "", nil
	}
	note, err := sec.Data()
	if err != nil {
		return "", err
	}
	// An ELF note: name size, description size, type, then the name
	// ("Go\0", padded to 4 bytes) and the description.
	if len(note) < 16 || !bytes.Equal(note[12:16], []byte("Go\x00\x00")) {
		return "", nil
	}
	size := int64(f.ByteOrder.Uint32(note[4:8]))
	if int64(len(note)-16) < size {
		return "", nil
	}
	return string(note[16 : 16+size]), nil
}
