package ui

import "testing"

// JSON values show <, > and & as typed, not as the encoder's \u003c
// escapes; a backslash escaped in the JSON stays so, and other escapes
// stay as they are.
func TestPrettyJSONShowsWhatWasTyped(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]string{
		`{"q":"a \u003cb\u003e \u0026 c"}`: "{\n  \"q\": \"a <b> & c\"\n}",
		`["\\u003c not an escape"]`:        "[\n  \"\\\\u003c not an escape\"\n]",
		`"tab\there \u00e9 \"q\""`:         `"tab\there \u00e9 \"q\""`,
		`"\u003C upper hex"`:               `"< upper hex"`,
	} {
		if got := prettyJSON([]byte(raw)); got != want {
			t.Errorf("prettyJSON(%s) = %q, want %q", raw, got, want)
		}
	}
	if got := prettyAny(map[string]any{"cmd": "echo <x> && y"}); got != "{\n  \"cmd\": \"echo <x> && y\"\n}" {
		t.Errorf("prettyAny = %q", got)
	}
}
