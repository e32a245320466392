// Package suggest finds, among known names, the one a mistyped name most
// likely meant, for "did you mean" hints.
package suggest

// Closest returns the known name closest to s by edit distance, when it is
// close enough to be what s meant (fewer edits than half s's length plus
// two); ok is false when none is.
func Closest(s string, known []string) (name string, ok bool) {
	best, bestD := "", len(s)/2+2
	for _, k := range known {
		if d := editDistance(s, k); d < bestD {
			best, bestD = k, d
		}
	}
	return best, best != ""
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
