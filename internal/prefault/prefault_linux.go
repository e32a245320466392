package prefault

import "syscall"

// madvPopulateRead is MADV_POPULATE_READ (Linux 5.14), which syscall lacks.
const madvPopulateRead = 22

func init() {
	if v, _ := syscall.Getenv("WEIR_PREFAULT"); v != "off" {
		_, _ = Code()
	}
}

// Code maps every executable mapping of the running binary's file. It
// returns the number of bytes it asked the kernel to map, or the first
// error.
func Code() (int, error) {
	exe := make([]byte, 4096)
	n, err := syscall.Readlink("/proc/self/exe", exe)
	if err != nil {
		return 0, err
	}
	maps, err := readFile("/proc/self/maps")
	if err != nil {
		return 0, err
	}
	total := 0
	for line := range lines(maps) {
		lo, hi, perms, path := parseMapping(line)
		if len(perms) < 3 || perms[2] != 'x' || path != string(exe[:n]) || hi <= lo {
			continue
		}
		if err := populate(lo, hi); err != nil {
			return total, err
		}
		total += int(hi - lo)
	}
	return total, nil
}

// populate maps the pages of [lo, hi), a readable mapping, into the page
// table.
func populate(lo, hi uintptr) error {
	if _, _, errno := syscall.Syscall(syscall.SYS_MADVISE, lo, hi-lo, madvPopulateRead); errno != 0 {
		return errno
	}
	return nil
}

func readFile(path string) ([]byte, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer func() { _ = syscall.Close(fd) }() // read only
	buf := make([]byte, 0, 16<<10)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		m, err := syscall.Read(fd, buf[len(buf):cap(buf)])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if m == 0 {
			return buf, nil
		}
		buf = buf[:len(buf)+m]
	}
}

// lines yields b's newline-terminated lines, without the newline.
func lines(b []byte) func(func([]byte) bool) {
	return func(yield func([]byte) bool) {
		for len(b) > 0 {
			i := 0
			for i < len(b) && b[i] != '\n' {
				i++
			}
			if !yield(b[:i]) {
				return
			}
			if i < len(b) {
				i++
			}
			b = b[i:]
		}
	}
}

// parseMapping reads one line of /proc/self/maps:
// "lo-hi perms offset dev inode path".
func parseMapping(line []byte) (lo, hi uintptr, perms, path string) {
	field := func() []byte {
		for len(line) > 0 && line[0] == ' ' {
			line = line[1:]
		}
		i := 0
		for i < len(line) && line[i] != ' ' {
			i++
		}
		f := line[:i]
		line = line[i:]
		return f
	}
	span := field()
	perms = string(field())
	for range 3 { // offset, device, inode
		field()
	}
	for len(line) > 0 && line[0] == ' ' {
		line = line[1:]
	}
	path = string(line)
	for i, c := range span {
		if c == '-' {
			return hex(span[:i]), hex(span[i+1:]), perms, path
		}
	}
	return 0, 0, perms, path
}

func hex(b []byte) uintptr {
	var v uintptr
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | uintptr(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | uintptr(c-'a'+10)
		}
	}
	return v
}
