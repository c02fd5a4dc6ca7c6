package apiserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"sort"
	"strings"
	"sync"
)

// decodeBody reads the request body strictly into dst (details.md §1): an empty body is {},
// unknown members are ERR_214 (listing the supported ones), values of the wrong type are
// ERR_215, and anything that is not one JSON value is ERR_213. It returns the raw members
// so callers can tell "given" from "omitted".
func (c *call) decodeBody(dst any) (map[string]json.RawMessage, error) {
	raw, err := io.ReadAll(c.r.Body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, badRequest("ERR_212", "The request body is larger than %d bytes.", tooBig.Limit)
		}
		return nil, badRequest("ERR_212", "The request body could not be read.")
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = []byte("{}")
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(raw, &members); err != nil {
		return nil, badRequest("ERR_213", "The request body is not a JSON object: %s.", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		var typeErr *json.UnmarshalTypeError
		switch {
		case errors.As(err, &typeErr):
			return nil, withDetail(badRequest("ERR_215", "Invalid value for parameter %q: expected %s.", typeErr.Field, typeErr.Type), "param", typeErr.Field)
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
			return nil, withDetail(badRequest("ERR_214", "Unknown parameter %q. Supported parameters: %s.", name, strings.Join(jsonFields(dst), ", ")), "param", name)
		default:
			return nil, badRequest("ERR_213", "The request body could not be parsed as JSON: %s.", err)
		}
	}
	return members, nil
}

var fieldCache sync.Map // reflect.Type -> []string

// jsonFields lists the JSON member names a request struct accepts, without the path id.
func jsonFields(v any) []string {
	t := reflect.TypeOf(v)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if names, ok := fieldCache.Load(t); ok {
		return names.([]string)
	}
	var names []string
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" && name != "id" {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	fieldCache.Store(t, names)
	return names
}

// givenValues reports whether any member other than the path id carries a non-null value.
func givenValues(members map[string]json.RawMessage) bool {
	for name, value := range members {
		if name != "id" && string(bytes.TrimSpace(value)) != "null" {
			return true
		}
	}
	return false
}
