package dagfile

import (
	"bytes"
	"fmt"
)

// MaxDepth is the deepest nesting of mappings and lists a DAG file may
// have. The YAML parser's cost grows with the square of the nesting (100,000
// "[" took gigabytes), so prescan refuses deeper input before it is parsed.
const MaxDepth = 64

// prescan refuses nesting deeper than MaxDepth in one linear pass over src,
// before the YAML parser sees it: flow collections ("[", "{") and block
// collections (deeper indentation, "- " entries) both count. It
// over-approximates nothing a valid DAG file needs: quoted strings,
// comments and block scalars ("|", ">") are skipped, and a "[" or "{" opens
// a flow collection only where a value starts.
func prescan(src []byte) *Problem {
	s := scanner{}
	for rest, more := src, true; more; {
		var line []byte
		line, rest, more = bytes.Cut(rest, []byte("\n"))
		s.line++
		if p := s.scanLine(bytes.TrimSuffix(line, []byte("\r"))); p != nil {
			return p
		}
	}
	return nil
}

// scanner is prescan's state between lines.
type scanner struct {
	line    int   // 1-based number of the current line
	indent  []int // columns of the open block collections
	flow    int   // depth of open flow collections
	quote   byte  // the open quote of a string spanning lines, or 0
	inLit   bool  // in a block scalar ("|" or ">") ...
	literal int   // ... whose lines are indented deeper than this
}

func (s *scanner) deep(col int) *Problem {
	return &Problem{Line: s.line, Col: col + 1,
		Msg: fmt.Sprintf("nesting deeper than %d levels, the limit of a DAG file", MaxDepth)}
}

// scanLine reads one line: its indentation (in block context) and then its
// content.
func (s *scanner) scanLine(line []byte) *Problem {
	ind := len(line) - len(bytes.TrimLeft(line, " "))
	content := line[ind:]
	if s.inLit {
		if len(bytes.TrimSpace(line)) == 0 || ind > s.literal {
			return nil // a block scalar's text
		}
		s.inLit = false
	}
	if s.quote == 0 && s.flow == 0 {
		if ind == 0 && (bytes.HasPrefix(line, []byte("---")) || bytes.HasPrefix(line, []byte("..."))) {
			s.indent = s.indent[:0] // a new document
			return s.scanContent(line, 0, skipSpaces(line, 3))
		}
		if len(content) == 0 || content[0] == '#' {
			return nil
		}
		for len(s.indent) > 0 && s.indent[len(s.indent)-1] > ind {
			s.indent = s.indent[:len(s.indent)-1]
		}
		if len(s.indent) == 0 || s.indent[len(s.indent)-1] < ind {
			s.indent = append(s.indent, ind)
		}
		if len(s.indent) > MaxDepth {
			return s.deep(ind)
		}
	}
	return s.scanContent(line, ind, ind)
}

// scanContent reads a line from column i; valueAt is the column where a
// value may start (a "[" or "{" there opens a flow collection).
func (s *scanner) scanContent(line []byte, first, i int) *Problem {
	valueAt := i
	for i < len(line) {
		c := line[i]
		switch {
		case s.quote != 0:
			i = s.skipQuoted(line, i)
			continue
		case c == '"' || c == '\'':
			if s.flow > 0 || i == valueAt {
				s.quote = c
				i = s.skipQuoted(line, i+1)
				continue
			}
		case c == '#' && (i == 0 || line[i-1] == ' ' || line[i-1] == '\t'):
			return nil
		case s.flow > 0:
			switch c {
			case '[', '{':
				s.flow++
				if len(s.indent)+s.flow > MaxDepth {
					return s.deep(i)
				}
			case ']', '}':
				s.flow--
			}
		case (c == '[' || c == '{') && i == valueAt:
			s.flow = 1
			if len(s.indent)+s.flow > MaxDepth {
				return s.deep(i)
			}
		case c == '-' && i == valueAt && (i+1 == len(line) || line[i+1] == ' '):
			// A block list entry: what follows is one level deeper.
			valueAt = skipSpaces(line, i+1)
			s.indent = append(s.indent, valueAt)
			if len(s.indent) > MaxDepth {
				return s.deep(i)
			}
			i = valueAt
			continue
		case (c == '&' || c == '!') && i == valueAt:
			// An anchor or tag precedes the value.
			for i < len(line) && line[i] != ' ' {
				i++
			}
			valueAt = skipSpaces(line, i)
			i = valueAt
			continue
		case c == ':' && (i+1 == len(line) || line[i+1] == ' '):
			valueAt = skipSpaces(line, i+1)
			i = valueAt
			continue
		case (c == '|' || c == '>') && i == valueAt:
			s.inLit, s.literal = true, first
			return nil
		}
		i++
	}
	return nil
}

// skipQuoted skips the inside of a string whose quote s.quote opened before
// i, and its closing quote; it returns where it stopped (the line's end if
// the string goes on).
func (s *scanner) skipQuoted(line []byte, i int) int {
	for i < len(line) {
		c := line[i]
		switch {
		case s.quote == '"' && c == '\\':
			i += 2
			continue
		case c == s.quote && s.quote == '\'' && i+1 < len(line) && line[i+1] == '\'':
			i += 2
			continue
		case c == s.quote:
			s.quote = 0
			return i + 1
		}
		i++
	}
	return len(line)
}

func skipSpaces(line []byte, i int) int {
	for i < len(line) && line[i] == ' ' {
		i++
	}
	return i
}
