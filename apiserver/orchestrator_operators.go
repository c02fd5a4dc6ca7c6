package apiserver

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"math/big"
	"slices"
	"time"

	"github.com/warrenhq/terraform-provider-warren/apiserver/apierr"
	"github.com/warrenhq/terraform-provider-warren/apiserver/kinds"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/ids"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
)

// BindingOrchestrator is the endpoint binding that makes an endpoint eligible for operators'
// bound_endpoints (details.md §7.5: the public value is the orchestrator's name).
const BindingOrchestrator = "orchestrator"

// Lifetimes of what the operator CA issues.
const (
	operatorCertLifetime = 365 * 24 * time.Hour
	operatorCALifetime   = 10 * 365 * 24 * time.Hour
)

// orchestratorOperators is /orchestrator_operators (details.md §6.14, §7.2). A binding is
// allowed only with the bindings feature; turning the feature off clears the binding. A CSR is
// signed by the account's operator CA (client-auth certificate for a year); endpoint selectors
// are CEL over `endpoint` (rules.EndpointSelector), compiled when written.
var orchestratorOperators = &family[api.OrchestratorOperator, *api.OrchestratorOperator, api.OrchestratorOperatorCreate, api.OrchestratorOperatorUpdate]{
	kind: kinds.OrchestratorOperator,
	def:  api.OrchestratorOperators,
	create: func(c *call, tx store.Tx, in *api.OrchestratorOperatorCreate, op *api.OrchestratorOperator) (any, error) {
		if err := setText(rules.OperatorText, in.Description, in.Metadata, &op.Description, &op.Metadata); err != nil {
			return nil, err
		}
		op.UpdatedAt = op.CreatedAt
		// The principal's uri is "" in the API's examples (details.md §1).
		op.Principal = api.Ref{ID: c.who.id}
		op.EnabledFeatures, op.Region = []string{}, "global"
		op.Binding = api.OperatorBinding{Cert: noOperatorCert()}
		if err := setOperatorScalars(in.EnabledFeatures, in.Region, op); err != nil {
			return nil, err
		}
		if d := in.Deployment; d != nil {
			for _, m := range []struct {
				field   string
				in, dst *string
			}{{"name", d.Name, &op.Deployment.Name}, {"namespace", d.Namespace, &op.Deployment.Namespace}, {"version", d.Version, &op.Deployment.Version}, {"cluster_name", d.ClusterName, &op.Deployment.ClusterName}} {
				if err := setDeployment(m.field, m.in, m.dst); err != nil {
					return nil, err
				}
			}
		}
		return nil, applyBinding(c, tx, in.Binding, op)
	},
	update: func(c *call, tx store.Tx, in *api.OrchestratorOperatorUpdate, op *api.OrchestratorOperator) error {
		if err := setText(rules.OperatorText, in.Description, in.Metadata, &op.Description, &op.Metadata); err != nil {
			return err
		}
		if err := setOperatorScalars(in.EnabledFeatures, in.Region, op); err != nil {
			return err
		}
		if d := in.Deployment; d != nil {
			// namespace and cluster_name cannot change (details.md §6.14); sending the
			// current value is accepted, as clients send back what they read.
			for _, m := range []struct {
				field string
				in    *string
				have  string
			}{{"namespace", d.Namespace, op.Deployment.Namespace}, {"cluster_name", d.ClusterName, op.Deployment.ClusterName}} {
				if m.in != nil && *m.in != m.have {
					return apierr.WithDetail(apierr.BadRequest("ERR_215", "The deployment %s cannot be updated (it is %s); create another operator.", m.field, rules.Quote(m.have)), "param", "deployment."+m.field)
				}
			}
			if err := setDeployment("name", d.Name, &op.Deployment.Name); err != nil {
				return err
			}
			if err := setDeployment("version", d.Version, &op.Deployment.Version); err != nil {
				return err
			}
		}
		if err := applyBinding(c, tx, in.Binding, op); err != nil {
			return err
		}
		op.UpdatedAt = api.FormatTime(c.s.opts.Now())
		return nil
	},
	routes: func(f *family[api.OrchestratorOperator, *api.OrchestratorOperator, api.OrchestratorOperatorCreate, api.OrchestratorOperatorUpdate], s *Server, mux *router) {
		mux.api("GET "+f.def.Path+"/{id}/bound_endpoints", op{out: typeOf[api.Endpoint](), list: api.Endpoints.Member}, func(c *call) error { return boundEndpoints(f, c) })
	},
}

func noOperatorCert() api.OperatorCert {
	return api.OperatorCert{NotBefore: api.ZeroTime, NotAfter: api.ZeroTime}
}

// setOperatorScalars applies a given enabled_features (lowercased, replacing the list) and
// region.
func setOperatorScalars(features []string, region *string, op *api.OrchestratorOperator) error {
	if features != nil {
		lower, err := rules.EnabledFeatures(features)
		if err != nil {
			return err
		}
		op.EnabledFeatures = lower
	}
	if region != nil {
		if err := rules.OperatorRegion(*region); err != nil {
			return err
		}
		op.Region = *region
	}
	return nil
}

func setDeployment(field string, in, dst *string) error {
	if in == nil {
		return nil
	}
	if err := rules.OperatorDeploymentValue(field, *in); err != nil {
		return err
	}
	*dst = *in
	return nil
}

// applyBinding applies a request's binding to op, whose features are already set.
func applyBinding(c *call, tx store.Tx, in *api.OperatorBindingInput, op *api.OrchestratorOperator) error {
	if !slices.Contains(op.EnabledFeatures, rules.FeatureBindings) {
		if in != nil {
			return apierr.WithDetail(apierr.BadRequest("ERR_215", "A binding may be given only when enabled_features contains %q.", rules.FeatureBindings), "param", "binding")
		}
		// Without the feature there is nothing bound: a binding left from before goes.
		op.Binding = api.OperatorBinding{Cert: noOperatorCert()}
		return nil
	}
	if in != nil {
		if in.EndpointSelectors != nil {
			if _, err := rules.EndpointSelectors(in.EndpointSelectors); err != nil {
				return err
			}
			op.Binding.EndpointSelectors = in.EndpointSelectors
			if len(in.EndpointSelectors) == 0 {
				op.Binding.EndpointSelectors = nil // [] clears: the API shows null
			}
		}
		if in.IngressEndpoint != nil && *in.IngressEndpoint != "" {
			if err := rules.IngressEndpoint(*in.IngressEndpoint); err != nil {
				return err
			}
			op.Binding.IngressEndpoint = *in.IngressEndpoint
		}
		if in.CSR != nil {
			csr, err := rules.OperatorCSR(*in.CSR)
			if err != nil {
				return err
			}
			if op.Binding.Cert, err = signOperatorCSR(c, tx, csr); err != nil {
				return err
			}
		}
	}
	if op.Binding.IngressEndpoint == "" {
		op.Binding.IngressEndpoint = "ingress." + c.s.opts.DomainBase + ":443"
	}
	return nil
}

// operatorCADoc is the stored document of an operator CA; kinds.OperatorCASecret its secret.
type operatorCADoc struct {
	CertPEM string `json:"cert_pem"`
}

// operatorCA returns the caller's account's operator CA, made and stored on first use. Two
// first uses at once cannot both store one: the loser's transaction fails on the unique key.
func operatorCA(c *call, tx store.Tx) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	ctx := c.r.Context()
	objs, err := tx.List(ctx, store.ListQuery{Kind: kinds.OperatorCA, AccountID: c.who.accountID, Limit: 1})
	if err != nil {
		return nil, nil, err
	}
	if len(objs) == 1 {
		return decodeOperatorCA(objs[0])
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	now := c.s.opts.Now().UTC().Truncate(time.Second)
	tmpl := &x509.Certificate{
		SerialNumber:          randomSerial(),
		Subject:               pkix.Name{CommonName: "Warren operator CA " + c.who.accountID},
		NotBefore:             now,
		NotAfter:              now.Add(operatorCALifetime),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	doc, _ := json.Marshal(operatorCADoc{CertPEM: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))})
	secret, _ := json.Marshal(kinds.OperatorCASecret{KeyPEM: string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}))})
	err = tx.Insert(ctx, &store.Object{
		Kind: kinds.OperatorCA, ID: ids.New(ids.OperatorCA), AccountID: c.who.accountID, Doc: doc, Secret: secret,
		UniqueKeys: []string{kinds.OperatorCAKey(c.who.accountID)},
	})
	if err != nil {
		return nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	return cert, key, err
}

func decodeOperatorCA(o *store.Object) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	var doc operatorCADoc
	var secret kinds.OperatorCASecret
	if err := json.Unmarshal(o.Doc, &doc); err != nil {
		return nil, nil, err
	}
	if err := json.Unmarshal(o.Secret, &secret); err != nil {
		return nil, nil, err
	}
	certBlock, _ := pem.Decode([]byte(doc.CertPEM))
	keyBlock, _ := pem.Decode([]byte(secret.KeyPEM))
	if certBlock == nil || keyBlock == nil {
		return nil, nil, errors.New("operator CA: stored PEM is damaged")
	}
	cert, err := x509.ParseCertificate(certBlock.Bytes)
	if err != nil {
		return nil, nil, err
	}
	key, err := x509.ParsePKCS8PrivateKey(keyBlock.Bytes)
	if err != nil {
		return nil, nil, err
	}
	ec, ok := key.(*ecdsa.PrivateKey)
	if !ok {
		return nil, nil, errors.New("operator CA: stored key is not ECDSA")
	}
	return cert, ec, nil
}

// signOperatorCSR issues a client certificate for csr's key and common name.
func signOperatorCSR(c *call, tx store.Tx, csr *x509.CertificateRequest) (api.OperatorCert, error) {
	ca, key, err := operatorCA(c, tx)
	if err != nil {
		return api.OperatorCert{}, err
	}
	// Whole seconds, so the certificate says exactly what not_before / not_after say.
	now := c.s.opts.Now().UTC().Truncate(time.Second)
	tmpl := &x509.Certificate{
		SerialNumber:          randomSerial(),
		Subject:               pkix.Name{CommonName: csr.Subject.CommonName},
		NotBefore:             now,
		NotAfter:              now.Add(operatorCertLifetime),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, csr.PublicKey, key)
	if err != nil {
		return api.OperatorCert{}, err
	}
	return api.OperatorCert{
		Cert:      string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		NotBefore: api.FormatTime(tmpl.NotBefore),
		NotAfter:  api.FormatTime(tmpl.NotAfter),
	}, nil
}

// randomSerial is a 128-bit positive serial number (RFC 5280 allows up to 20 octets).
func randomSerial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return n.Add(n, big.NewInt(1))
}

// boundEndpoints is GET /orchestrator_operators/{id}/bound_endpoints: the account's endpoints
// with the orchestrator binding that one of the operator's selectors matches, newest first.
// Without selectors nothing is bound.
func boundEndpoints(f *family[api.OrchestratorOperator, *api.OrchestratorOperator, api.OrchestratorOperatorCreate, api.OrchestratorOperatorUpdate], c *call) error {
	q, err := c.parseListQuery(ids.Endpoint, nil)
	if err != nil {
		return err
	}
	var items []json.RawMessage
	var lastID string
	var more bool
	err = c.read(func(tx store.Tx) error {
		op, _, err := f.load(c, tx)
		if err != nil {
			return err
		}
		selectors, err := rules.EndpointSelectors(op.Binding.EndpointSelectors)
		if err != nil {
			return err
		}
		items, lastID, more = nil, "", false
		if len(selectors) == 0 {
			return nil
		}
		q.match = func(o *store.Object) (bool, error) {
			var e api.Endpoint
			if err := json.Unmarshal(o.Doc, &e); err != nil {
				return false, err
			}
			if !slices.Contains(e.Bindings, BindingOrchestrator) {
				return false, nil
			}
			se := rules.SelectorEndpointOf(&e)
			return slices.ContainsFunc(selectors, func(s *rules.Selector) bool { return s.Match(se) }), nil
		}
		objs, hasMore, err := q.page(c, tx, store.ListQuery{Kind: kinds.Endpoint, AccountID: c.who.accountID})
		if err != nil {
			return err
		}
		more = hasMore
		for _, o := range objs {
			var e api.Endpoint
			if err := json.Unmarshal(o.Doc, &e); err != nil {
				return err
			}
			e.URI = c.s.opts.BaseURL + "/endpoints/" + e.ID
			item, err := encodeJSON(&e)
			if err != nil {
				return err
			}
			items = append(items, item)
			lastID = o.ID
		}
		return nil
	})
	if err != nil {
		return err
	}
	return c.writeList(f.def.Path+"/"+c.r.PathValue("id")+"/bound_endpoints", api.Endpoints.Member, q, items, lastID, more)
}
