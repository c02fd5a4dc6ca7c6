package rules

import (
	"net"
	"net/http"
	"strconv"
	"strings"

	"golang.org/x/net/http/httpguts"
)

// Backend limits. The catalogue has codes for these caps but publishes no values; these are ours.
const (
	MaxWeight            = 10000
	MaxBackendChildren   = 32
	MaxLabels            = 10
	MaxTunnelLabelLength = 255
	MaxResponseBody      = 64 << 10
	DefaultStatusCode    = 200
)

// BackendText: backends have no description/metadata codes of their own.
var BackendText = GenericText

// Weights checks the weights of a weighted backend: 0..10000 (ERR_6512) and at most
// MaxBackendChildren children (ERR_6511).
func Weights(weights map[string]int64) error {
	if len(weights) > MaxBackendChildren {
		return violation("ERR_6511", "backends", "A weighted backend has at most %d backends.", MaxBackendChildren)
	}
	for id, w := range weights {
		if w < 0 || w > MaxWeight {
			return violation("ERR_6512", "backends", "The weight %d of %s is outside 0..%d.", w, Quote(id), MaxWeight)
		}
	}
	return nil
}

// FailoverChildren checks a failover backend's list: at most MaxBackendChildren (ERR_6513),
// none twice.
func FailoverChildren(ids []string) error {
	if len(ids) > MaxBackendChildren {
		return violation("ERR_6513", "backends", "A failover backend has at most %d backends.", MaxBackendChildren)
	}
	for i, id := range ids {
		for _, prev := range ids[:i] {
			if prev == id {
				return violation("ERR_215", "backends", "The backend %s is listed more than once.", Quote(id))
			}
		}
	}
	return nil
}

// StaticAddress checks a static backend's host:port (ERR_6505 shape or a control character,
// ERR_6506 port, ERR_6507 host).
func StaticAddress(address string) error {
	if err := Identifier("ERR_6505", "address", address); err != nil {
		return err
	}
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return violation("ERR_6505", "address", "The address %s must be host:port, e.g. 10.0.0.5:8080.", Quote(address))
	}
	if host == "" {
		return violation("ERR_6507", "address", "The address %s has no host.", Quote(address))
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return violation("ERR_6506", "address", "The port of %s must be a number from 1 to 65535.", Quote(address))
	}
	return nil
}

// HTTPResponse checks an http_response backend: a valid status code (ERR_6517), a body
// within MaxResponseBody bytes (ERR_6516) and valid header names and values (ERR_215).
func HTTPResponse(statusCode int64, body string, headers map[string]string) error {
	if statusCode < 100 || statusCode > 599 {
		return violation("ERR_6517", "status_code", "The status code %d is not a valid HTTP status code (100-599).", statusCode)
	}
	if len(body) > MaxResponseBody {
		return violation("ERR_6516", "body", "The body is %d bytes long; the maximum is %d bytes.", len(body), MaxResponseBody)
	}
	seen := map[string]bool{}
	for name, value := range headers {
		if !httpguts.ValidHeaderFieldName(name) || !httpguts.ValidHeaderFieldValue(value) {
			return violation("ERR_215", "headers", "The header %s: %s is not a valid HTTP header.", Quote(name), Quote(value))
		}
		canonical := http.CanonicalHeaderKey(name)
		if seen[canonical] {
			return violation("ERR_215", "headers", "The header %s is given twice with different case.", Quote(name))
		}
		seen[canonical] = true
	}
	return nil
}

// Labels checks tunnel-group labels: at most MaxLabels (ERR_6508), keys and values of 1 to
// MaxTunnelLabelLength characters (ERR_6509/6510) without control characters (ERR_215) or
// '=' (ERR_6531).
func Labels(labels map[string]string) error {
	if len(labels) > MaxLabels {
		return violation("ERR_6508", "labels", "A tunnel group has at most %d labels.", MaxLabels)
	}
	for k, v := range labels {
		if len(k) < 1 || len(k) > MaxTunnelLabelLength {
			return violation("ERR_6509", "labels", "The label key %s must be 1 to %d characters long.", Quote(k), MaxTunnelLabelLength)
		}
		if len(v) < 1 || len(v) > MaxTunnelLabelLength {
			return violation("ERR_6510", "labels", "The value of label %s must be 1 to %d characters long.", Quote(k), MaxTunnelLabelLength)
		}
		if err := Identifier("ERR_215", "labels", k); err != nil {
			return err
		}
		if err := Identifier("ERR_215", "labels", v); err != nil {
			return err
		}
		if strings.Contains(k, "=") || strings.Contains(v, "=") {
			return violation("ERR_6531", "labels", "The label %s=%s may not contain '='.", Quote(k), Quote(v))
		}
	}
	return nil
}
