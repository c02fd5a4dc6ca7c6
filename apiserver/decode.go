package apiserver

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"sort"
	"strings"
	"sync"

	json "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/warrenhq/terraform-provider-warren/apiserver/apierr"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
)

// decodeBody reads the request body strictly into dst (details.md §1) with the JSON v2
// decoder: an empty body is {}; a body that is not one JSON object (null, an array, a
// string …), is not valid JSON, holds invalid UTF-8 or a lone surrogate, or gives a member
// twice (RFC 7493 I-JSON) is ERR_213; member names match exactly, at every depth, and an
// unknown one is ERR_214 listing the supported ones; a value of the wrong type is ERR_215.
// It returns the raw members so callers can tell "given" from "omitted". A null member is
// the same as an omitted one (nil pointer, slice or map).
func (c *call) decodeBody(dst any) (map[string]jsontext.Value, error) {
	raw, err := c.readBody()
	if err != nil {
		return nil, err
	}
	return decodeObject(raw, dst)
}

// request is a request body decoded for a write transaction, which the store may run more
// than once (a serialization failure on PostgreSQL). Each attempt gets a copy of its own, so
// that what a hook changes in its input (a secret moved out of it, a default filled in)
// cannot change what the next attempt sees: the first attempt takes the body decoded up
// front, a later one decodes the same bytes again.
type request[R any] struct {
	raw     []byte
	first   *R                        // the first decoding, until an attempt takes it
	members map[string]jsontext.Value // its raw members, to tell "given" from "omitted"
}

// decodeRequest reads and decodes the request body strictly, as decodeBody does.
func decodeRequest[R any](c *call) (*request[R], error) {
	raw, err := c.readBody()
	if err != nil {
		return nil, err
	}
	r := &request[R]{raw: raw, first: new(R)}
	if r.members, err = decodeObject(raw, r.first); err != nil {
		return nil, err
	}
	return r, nil
}

// attempt returns the request, and its raw members, for one attempt of the write transaction.
func (r *request[R]) attempt() (*R, map[string]jsontext.Value, error) {
	if in := r.first; in != nil {
		r.first = nil
		return in, r.members, nil
	}
	in := new(R)
	members, err := decodeObject(r.raw, in)
	return in, members, err
}

// readBody reads the request body; an empty body is {}.
func (c *call) readBody() ([]byte, error) {
	raw, err := io.ReadAll(c.r.Body)
	if err != nil {
		return nil, bodyReadError(err)
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = []byte("{}")
	}
	return raw, nil
}

// bodyReadError is ERR_212 for a body that could not be read or is too large.
func bodyReadError(err error) error {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return apierr.BadRequest("ERR_212", "The request body is larger than %d bytes.", tooBig.Limit)
	}
	return apierr.BadRequest("ERR_212", "The request body could not be read.")
}

// decodeObject decodes one JSON object strictly into dst, as decodeBody says.
func decodeObject(raw []byte, dst any) (map[string]jsontext.Value, error) {
	// v2 would decode null into a struct as "nothing given": only an object is a request.
	if kind := jsontext.NewDecoder(bytes.NewReader(raw)).PeekKind(); kind != jsontext.KindBeginObject && kind != jsontext.KindInvalid {
		return nil, apierr.BadRequest("ERR_213", "The request body must be a JSON object, not %s.", kindName(kind))
	}
	// The syntax first (duplicates and UTF-8 at every depth), so that a duplicated or
	// malformed member is reported as such rather than as whatever the struct makes of it.
	var members map[string]jsontext.Value
	if err := json.Unmarshal(raw, &members); err != nil {
		return nil, syntaxError(err)
	}
	if err := json.Unmarshal(raw, dst, json.RejectUnknownMembers(true)); err != nil {
		return nil, memberError(err, dst)
	}
	return members, nil
}

// syntaxError is ERR_213 for a body the JSON decoder refused, naming where.
func syntaxError(err error) error {
	var syn *jsontext.SyntacticError
	if !errors.As(err, &syn) {
		var sem *json.SemanticError // an object whose members are not all strings, …
		if errors.As(err, &sem) {
			return apierr.BadRequest("ERR_213", "The request body is not a JSON object of members.")
		}
		return apierr.BadRequest("ERR_213", "The request body could not be parsed as JSON.")
	}
	param := pointerParam(syn.JSONPointer)
	if errors.Is(err, jsontext.ErrDuplicateName) {
		return apierr.WithDetail(apierr.BadRequest("ERR_213", "The member %s is given more than once.", rules.Quote(param)), "param", rules.Clip(param))
	}
	e := apierr.BadRequest("ERR_213", "The request body is not valid JSON: %s (at byte %d).", rules.Clip(syn.Err.Error()), syn.ByteOffset)
	if param != "" {
		e.Details["param"] = rules.Clip(param)
	}
	return e
}

// memberError turns a semantic decoding error into ERR_214 (unknown member, listing the
// members of the object it was found in) or ERR_215 (a value of the wrong type).
func memberError(err error, dst any) error {
	var sem *json.SemanticError
	if !errors.As(err, &sem) {
		return syntaxError(err)
	}
	param := pointerParam(sem.JSONPointer)
	if errors.Is(err, json.ErrUnknownName) {
		supported := jsonFields(dst)
		if sem.GoType != nil && sem.GoType.Kind() == reflect.Struct {
			supported = jsonFields(reflect.New(sem.GoType).Interface())
		}
		return apierr.WithDetail(apierr.BadRequest("ERR_214", "Unknown parameter %s. Supported parameters: %s.", rules.Quote(param), strings.Join(supported, ", ")), "param", rules.Clip(param))
	}
	expected := "another type"
	if sem.GoType != nil {
		expected = typeName(sem.GoType)
	}
	return apierr.WithDetail(apierr.BadRequest("ERR_215", "Invalid value for parameter %s: expected %s.", rules.Quote(param), expected), "param", rules.Clip(param))
}

// pointerParam writes a JSON pointer (/tls/enabled) as a parameter path (tls.enabled).
func pointerParam(p jsontext.Pointer) string {
	var parts []string
	for token := range p.Tokens() {
		parts = append(parts, token)
	}
	return strings.Join(parts, ".")
}

// kindName names a JSON kind for messages.
func kindName(k jsontext.Kind) string {
	switch k {
	case jsontext.KindNull:
		return "null"
	case jsontext.KindTrue, jsontext.KindFalse:
		return "a boolean"
	case jsontext.KindString:
		return "a string"
	case jsontext.KindNumber:
		return "a number"
	case jsontext.KindBeginArray:
		return "an array"
	}
	return "another value"
}

// typeName names the JSON type a Go type decodes from, for ERR_215 messages.
func typeName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return fmt.Sprint(t)
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
func givenValues(members map[string]jsontext.Value) bool {
	for name, value := range members {
		if name != "id" && value.Kind() != jsontext.KindNull {
			return true
		}
	}
	return false
}

// identifiers checks several identifier members (field, value, field, value …) with one
// error code: no control characters (rules.Identifier).
func identifiers(code string, fieldValues ...string) error {
	for i := 0; i+1 < len(fieldValues); i += 2 {
		if err := rules.Identifier(code, fieldValues[i], fieldValues[i+1]); err != nil {
			return err
		}
	}
	return nil
}
