package rules

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/ext"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// Orchestrator operators (details.md §6.14, §7.2). The catalogue has no codes of their own,
// so every rule gives ERR_215 (invalid value for a named parameter) and names the member.
var OperatorText = GenericText

// Value sets of operators (details.md §10.2).
var (
	OperatorFeatures = []string{"bindings", "ingress", "gateway"}
	// OperatorRegions are "global" (the default) and the region codes.
	OperatorRegions = append([]string{"global"}, Regions...)
)

// FeatureBindings is the feature that allows a binding.
const FeatureBindings = "bindings"

// Operator limits.
const (
	MaxOperatorSelectors     = 20
	MaxOperatorSelectorBytes = 4096
	MaxOperatorCSRBytes      = 16 << 10
)

// EnabledFeatures checks an operator's enabled_features and returns them lowercased, in the
// given order: each one of OperatorFeatures whatever its case, none twice.
func EnabledFeatures(features []string) ([]string, error) {
	out := make([]string, 0, len(features))
	for _, f := range features {
		lower := strings.ToLower(f)
		if !slices.Contains(OperatorFeatures, lower) {
			return nil, violation("ERR_215", "enabled_features", "The feature %s is not valid; enabled_features takes %s.", Quote(f), strings.Join(OperatorFeatures, ", "))
		}
		if slices.Contains(out, lower) {
			return nil, violation("ERR_215", "enabled_features", "The feature %s is given more than once.", Quote(lower))
		}
		out = append(out, lower)
	}
	return out, nil
}

// OperatorRegion checks an operator's region: "global" or a region code.
func OperatorRegion(region string) error {
	if !slices.Contains(OperatorRegions, region) {
		return violation("ERR_215", "region", "The region %s is not valid; use one of %s.", Quote(region), strings.Join(OperatorRegions, ", "))
	}
	return nil
}

// OperatorDeploymentValue checks one deployment member (deployment.<field>): an identifier
// of at most MaxNameBytes.
func OperatorDeploymentValue(field, value string) error {
	field = "deployment." + field
	if len(value) > MaxNameBytes {
		return violation("ERR_215", field, "The %s is longer than %d bytes.", field, MaxNameBytes)
	}
	return Identifier("ERR_215", field, value)
}

// IngressEndpoint checks a binding's ingress_endpoint: `hostname:port`.
func IngressEndpoint(s string) error {
	if _, _, err := Hostport(s); err != nil {
		return violation("ERR_215", "binding.ingress_endpoint", "The ingress_endpoint %s must be hostname:port, e.g. ingress.example.com:443.", Quote(s))
	}
	return nil
}

// OperatorCSR parses a binding's csr: one PEM "CERTIFICATE REQUEST" block (PKCS #10) whose
// signature verifies and that names a subject common name.
func OperatorCSR(csrPEM string) (*x509.CertificateRequest, error) {
	bad := func(format string, args ...any) error {
		return violation("ERR_215", "binding.csr", "The csr is not valid: "+format+".", args...)
	}
	if strings.TrimSpace(csrPEM) == "" {
		return nil, bad("it is empty")
	}
	if len(csrPEM) > MaxOperatorCSRBytes {
		return nil, bad("it is longer than %d bytes", MaxOperatorCSRBytes)
	}
	block, rest := pem.Decode([]byte(csrPEM))
	switch {
	case block == nil:
		return nil, bad("no PEM block was found")
	case block.Type != "CERTIFICATE REQUEST" && block.Type != "NEW CERTIFICATE REQUEST":
		return nil, bad("the PEM block is %s, not CERTIFICATE REQUEST", Quote(block.Type))
	case len(block.Headers) > 0:
		return nil, bad("PEM headers are not allowed")
	case strings.TrimSpace(string(rest)) != "":
		return nil, bad("only one PEM block may be given")
	}
	csr, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return nil, bad("%s", Clip(err.Error()))
	}
	if err := csr.CheckSignature(); err != nil {
		return nil, bad("its signature does not verify (%s)", Clip(err.Error()))
	}
	if csr.Subject.CommonName == "" {
		return nil, bad("its subject has no common name")
	}
	return csr, nil
}

// SelectorEndpoint is what an endpoint selector sees as `endpoint`: the endpoint's scalar
// members and bindings (details.md §7.5), named as in the API.
type SelectorEndpoint struct {
	ID               string   `cel:"id"`
	URL              string   `cel:"url"`
	Proto            string   `cel:"proto"`
	Scheme           string   `cel:"scheme"`
	Host             string   `cel:"host"`
	Hostport         string   `cel:"hostport"`
	Port             int      `cel:"port"`
	Type             string   `cel:"type"`
	Region           string   `cel:"region"`
	Name             string   `cel:"name"`
	Description      string   `cel:"description"`
	Metadata         string   `cel:"metadata"`
	UpstreamURL      string   `cel:"upstream_url"`
	UpstreamProtocol string   `cel:"upstream_protocol"`
	Bindings         []string `cel:"bindings"`
	PoolingEnabled   bool     `cel:"pooling_enabled"`
}

// SelectorEndpointOf is e as a selector sees it.
func SelectorEndpointOf(e *api.Endpoint) *SelectorEndpoint {
	return &SelectorEndpoint{
		ID: e.ID, URL: e.URL, Proto: e.Proto, Scheme: e.Scheme, Host: e.Host, Hostport: e.Hostport, Port: e.Port,
		Type: e.Type, Region: e.Region, Name: e.Name, Description: e.Description, Metadata: e.Metadata,
		UpstreamURL: e.UpstreamURL, UpstreamProtocol: e.UpstreamProtocol, Bindings: e.Bindings, PoolingEnabled: e.PoolingEnabled,
	}
}

var selectorEnv = sync.OnceValues(func() (*cel.Env, error) {
	t := reflect.TypeFor[SelectorEndpoint]()
	return cel.NewEnv(
		ext.NativeTypes(t, ext.ParseStructTags(true)),
		ext.Strings(),
		cel.Variable("endpoint", cel.ObjectType("rules.SelectorEndpoint")),
	)
})

// Selector is a compiled endpoint selector, safe for concurrent use.
type Selector struct{ prg cel.Program }

// EndpointSelector compiles one endpoint selector: a boolean CEL expression over `endpoint`
// (SelectorEndpoint), e.g. `endpoint.proto == "https" && endpoint.metadata == "k8s"` or
// `true`. index names its place for the message.
func EndpointSelector(index int, expr string) (*Selector, error) {
	field := fmt.Sprintf("binding.endpoint_selectors[%d]", index)
	if strings.TrimSpace(expr) == "" {
		return nil, violation("ERR_215", field, "The endpoint selector %s is empty.", field)
	}
	if len(expr) > MaxOperatorSelectorBytes {
		return nil, violation("ERR_215", field, "The endpoint selector %s is longer than %d bytes.", field, MaxOperatorSelectorBytes)
	}
	env, err := selectorEnv()
	if err != nil {
		return nil, err
	}
	checked, iss := env.Compile(expr)
	if iss.Err() != nil {
		return nil, violation("ERR_215", field, "The endpoint selector %s is not valid CEL over endpoint: %s", field, celIssue(iss))
	}
	if checked.OutputType() != cel.BoolType {
		return nil, violation("ERR_215", field, "The endpoint selector %s must be a boolean expression, not %s.", field, checked.OutputType())
	}
	prg, err := env.Program(checked)
	if err != nil {
		return nil, violation("ERR_215", field, "The endpoint selector %s is not valid: %s", field, Clip(err.Error()))
	}
	return &Selector{prg: prg}, nil
}

// EndpointSelectors compiles every selector of a binding (at most MaxOperatorSelectors).
func EndpointSelectors(exprs []string) ([]*Selector, error) {
	if len(exprs) > MaxOperatorSelectors {
		return nil, violation("ERR_215", "binding.endpoint_selectors", "A binding takes at most %d endpoint selectors.", MaxOperatorSelectors)
	}
	out := make([]*Selector, len(exprs))
	for i, e := range exprs {
		s, err := EndpointSelector(i, e)
		if err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}

// Match evaluates the selector over e; an evaluation error is no match.
func (s *Selector) Match(e *SelectorEndpoint) bool {
	v, _, err := s.prg.Eval(map[string]any{"endpoint": e})
	return err == nil && v == types.True
}
