// Package sysfile opens and reads regular files with the system calls
// they need and no more.
//
// os.Open and os.OpenFile offer every new descriptor to the runtime's
// poller: on Linux the descriptor is made non-blocking, epoll refuses a
// regular file (EPERM) and the descriptor is made blocking again, five
// system calls more than the open itself, and os.ReadFile adds an fstat.
// The paths every try takes (its process's /proc entry, its shell's exit
// file, its log) open several files a try, and on the virtual machines
// Weir is measured on every system call is a round trip through the
// hypervisor (docs/benchmarks.md). These helpers take the arguments and
// return the errors (*fs.PathError) of their os counterparts without the
// extra calls; the files they open are used as os opens regular files,
// with blocking reads and writes.
package sysfile

import (
	"errors"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// ReadFile reads the whole file at path, as os.ReadFile does: an open, the
// reads and a close.
func ReadFile(path string) ([]byte, error) {
	fd, err := Open(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer func() { _ = unix.Close(fd) }()
	buf := make([]byte, 0, 512)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)] // grows the capacity
		}
		n, err := unix.Read(fd, buf[len(buf):cap(buf)])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		if n == 0 {
			return buf, nil
		}
		buf = buf[:len(buf)+n]
	}
}

// OpenFile opens the regular file at path as os.OpenFile does (close on
// exec included), without offering it to the poller.
func OpenFile(path string, flag int, perm fs.FileMode) (*os.File, error) {
	fd, err := Open(path, flag, perm)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), path), nil
}

// Open opens path close on exec and returns the descriptor itself, for a
// caller that writes with pwrite and closes it alone (the process ledger's
// records); its error is os.OpenFile's.
func Open(path string, flag int, perm fs.FileMode) (int, error) {
	for {
		fd, err := unix.Open(path, flag|unix.O_CLOEXEC, uint32(perm.Perm()))
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return -1, &fs.PathError{Op: "open", Path: path, Err: err}
		}
		return fd, nil
	}
}
