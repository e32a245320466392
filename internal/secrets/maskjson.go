package secrets

import (
	"encoding/json"
	"net/url"
	"strings"
)

// MaskJSON returns a JSON document (a trigger's kwargs, an event's extra, a
// variable's JSON value) for display: the values of keys that name a
// secret (password, token, api_key, authorization, ...), at any depth,
// become "***", and so do the passwords of URLs. What is not JSON is shown
// as "***" whole.
func MaskJSON(kwargs json.RawMessage) json.RawMessage {
	if len(kwargs) == 0 {
		return kwargs
	}
	var v any
	if err := json.Unmarshal(kwargs, &v); err != nil {
		return json.RawMessage(`"` + Masked + `"`)
	}
	out, err := json.Marshal(mask(v))
	if err != nil {
		return json.RawMessage(`"` + Masked + `"`)
	}
	return out
}

func mask(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if SensitiveName(k) {
				x[k] = Masked
			} else {
				x[k] = mask(val)
			}
		}
		return x
	case []any:
		for i := range x {
			x[i] = mask(x[i])
		}
		return x
	case string:
		if u, err := url.Parse(x); err == nil && u.User != nil {
			if _, has := u.User.Password(); has {
				u.User = url.UserPassword(u.User.Username(), Masked)
				return strings.Replace(u.String(), url.QueryEscape(Masked), Masked, 1)
			}
		}
		return x
	default:
		return v
	}
}
