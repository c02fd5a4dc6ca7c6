package apiserver

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"strings"
	"time"

	"github.com/warrenhq/terraform-provider-warren/apiserver/apierr"
	"github.com/warrenhq/terraform-provider-warren/apiserver/kinds"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
)

type route = api.HTTPSEdgeRoute

// httpsEdgeRoutes is /edges/https/{edge_id}/routes (details.md §6.11, §7.4): a route lives
// under its edge (it goes when the edge goes) and is listed only in the edge's routes
// member. Its match is unique within the edge (ERR_7126). At most one of oauth, oidc and
// saml is enabled on a route (ERR_7079), and on one route of an edge (ERR_7155). Every
// route is a path route (match starts with "/"), so ERR_7134 cannot arise.
var httpsEdgeRoutes = &family[route, *route, api.HTTPSEdgeRouteCreate, api.HTTPSEdgeRouteCreate]{
	kind: kinds.HTTPSEdgeRoute,
	def:  api.HTTPSEdgeRoutes,
	create: func(c *call, tx store.Tx, in *api.HTTPSEdgeRouteCreate, r *route) (any, error) {
		r.EdgeID = c.r.PathValue(api.HTTPSEdgeRoutes.ParentParam)
		return nil, setRoute(in, r, true)
	},
	update: func(c *call, tx store.Tx, in *api.HTTPSEdgeRouteCreate, r *route) error {
		return setRoute(in, r, false)
	},
	modules: []module[*route]{
		backendModule(func(r *route) **api.BackendModule { return &r.Backend }),
		ipRestrictionModule(func(r *route) **api.IPRestrictionModule { return &r.IPRestriction }),
		pureModule("circuit_breaker", func(r *route) **api.CircuitBreakerModule { return &r.CircuitBreaker }, rules.CircuitBreaker),
		toggleModule("compression", func(r *route) **api.ToggleModule { return &r.Compression }),
		pureModule("request_headers", func(r *route) **api.HeadersModule { return &r.RequestHeaders }, rules.Headers),
		pureModule("response_headers", func(r *route) **api.HeadersModule { return &r.ResponseHeaders }, rules.Headers),
		pureModule("webhook_verification", func(r *route) **api.WebhookVerificationModule { return &r.WebhookVerification }, rules.WebhookVerification),
		pureModule("oauth", func(r *route) **api.OAuthModule { return &r.OAuth }, rules.OAuth),
		samlModule,
		pureModule("oidc", func(r *route) **api.OIDCModule { return &r.OIDC }, rules.OIDC),
		toggleModule("websocket_tcp_converter", func(r *route) **api.ToggleModule { return &r.WebsocketTCPConverter }),
		pureModule("user_agent_filter", func(r *route) **api.UserAgentFilterModule { return &r.UserAgentFilter }, rules.UserAgentFilter),
		trafficPolicyModule(rules.PolicyOwnerHTTPSRoute, func(r *route) **api.TrafficPolicyModule { return &r.TrafficPolicy }),
	},
	check: func(w *write[*route]) error {
		auth := authModules(w.obj)
		if len(auth) > 1 {
			return apierr.WithDetail(apierr.BadRequest("ERR_7079", "Only one of oauth, oidc and saml may be enabled on a route; enabled: %s.", strings.Join(auth, ", ")), "param", auth[1])
		}
		if len(auth) == 0 {
			return nil
		}
		siblings, err := w.tx.List(w.c.r.Context(), store.ListQuery{Kind: kinds.HTTPSEdgeRoute, AccountID: w.c.who.accountID, ParentID: w.parentID})
		if err != nil {
			return err
		}
		for _, o := range siblings {
			var other route
			if err := json.Unmarshal(o.Doc, &other); err != nil {
				return err
			}
			if other.ID != w.obj.ID && len(authModules(&other)) > 0 {
				return apierr.WithDetail(apierr.BadRequest("ERR_7155", "OAuth, OIDC or SAML may be enabled on one route of an edge; route %s already has it.", other.ID), "param", auth[0])
			}
		}
		return nil
	},
	hide:   hideRouteSecrets,
	reveal: kinds.RevealRouteSecrets,
	unique: func(_ string, r *route) []string { return []string{kinds.RouteMatchKey(r.EdgeID, r.Match)} },
	duplicate: func(c *call, tx store.Tx, dup *store.DuplicateError) error {
		return apierr.WithDetail(apierr.BadRequest("ERR_7126", "The match must be unique within the edge; route %s has it.", dup.HolderID), "param", "match")
	},
}

// setRoute applies a create or PATCH body: edge_id must be the path's (ERR_7110), match_type
// and match are required on create and checked together (rules.RouteMatch).
func setRoute(in *api.HTTPSEdgeRouteCreate, r *route, create bool) error {
	if in.EdgeID != nil && *in.EdgeID != r.EdgeID {
		return apierr.WithDetail(apierr.BadRequest("ERR_7110", "The edge_id %s does not match the edge of the path (%s).", rules.Quote(*in.EdgeID), r.EdgeID), "param", "edge_id")
	}
	if err := setText(edgeText, in.Description, in.Metadata, &r.Description, &r.Metadata); err != nil {
		return err
	}
	if !create && in.MatchType == nil && in.Match == nil {
		return nil
	}
	matchType, match := r.MatchType, r.Match
	if in.MatchType != nil || create {
		matchType = deref(in.MatchType)
	}
	if in.Match != nil || create {
		match = deref(in.Match)
	}
	if err := rules.RouteMatch(matchType, match); err != nil {
		return err
	}
	r.MatchType, r.Match = matchType, match
	return nil
}

// authModules names the enabled authentication modules of a route.
func authModules(r *route) []string {
	var out []string
	if r.OAuth != nil && r.OAuth.Enabled {
		out = append(out, "oauth")
	}
	if r.SAML != nil && r.SAML.Enabled {
		out = append(out, "saml")
	}
	if r.OIDC != nil && r.OIDC.Enabled {
		out = append(out, "oidc")
	}
	return out
}

// samlModule is the saml module (details.md §8.6): the rules check the request, the server
// derives the service provider's URLs from its base URL and the route, and signs requests
// with a key it generates once per route, kept in the route's secret for the route's life.
var samlModule = moduleDef[*route, api.SAMLModuleRequest, api.SAMLModule]{
	name:  "saml",
	field: func(r *route) **api.SAMLModule { return &r.SAML },
	build: func(w *write[*route], in *api.SAMLModuleRequest) (*api.SAMLModule, error) {
		m, err := rules.SAML(in)
		if err != nil {
			return nil, err
		}
		entityID := w.c.s.opts.BaseURL + "/saml/" + w.obj.ID
		m.EntityID, m.MetadataURL = entityID, entityID
		m.AssertionConsumerServiceURL, m.SingleLogoutURL = entityID+"/acs", entityID+"/slo"
		m.RequestSigningCertificatePEM, err = samlSigningCertificate(w, entityID)
		return m, err
	},
}.erase()

// hideRouteSecrets is the route family's hide: a deep copy of r (through JSON, so that no
// module, app or string is shared with r or the request r was built from) whose module
// secrets are "", and secret with them; a module that is gone takes its secret along.
func hideRouteSecrets(r *route, secret []byte) (*route, []byte, error) {
	var sec kinds.RouteSecret
	if len(secret) > 0 {
		if err := json.Unmarshal(secret, &sec); err != nil {
			return nil, nil, err
		}
	}
	doc, err := json.Marshal(r)
	if err != nil {
		return nil, nil, err
	}
	hidden := new(route)
	if err := json.Unmarshal(doc, hidden); err != nil {
		return nil, nil, err
	}
	sec.OAuthClientSecret, sec.OIDCClientSecret, sec.WebhookSecret = "", "", ""
	oauth, oidc, webhook := kinds.RouteModuleSecrets(hidden)
	if oauth != nil && *oauth != nil && **oauth != "" {
		sec.OAuthClientSecret, *oauth = **oauth, new(string)
	}
	if oidc != nil {
		sec.OIDCClientSecret, *oidc = *oidc, ""
	}
	if webhook != nil {
		sec.WebhookSecret, *webhook = *webhook, ""
	}
	if sec == (kinds.RouteSecret{}) {
		return hidden, nil, nil // empty secrets stay empty
	}
	sealed, err := json.Marshal(sec)
	return hidden, sealed, err
}

// upgradeRouteSecrets moves the module secrets of a route stored before they were sealed
// out of its document (store.Upgrader, run at start-up); a route without any in its
// document is left as it is, so a second run changes nothing.
func upgradeRouteSecrets(o *store.Object) (bool, error) {
	var r route
	if err := json.Unmarshal(o.Doc, &r); err != nil {
		return false, err
	}
	oauth, oidc, webhook := kinds.RouteModuleSecrets(&r)
	if (oauth == nil || *oauth == nil || **oauth == "") && (oidc == nil || *oidc == "") && (webhook == nil || *webhook == "") {
		return false, nil
	}
	hidden, secret, err := hideRouteSecrets(&r, o.Secret)
	if err != nil {
		return false, err
	}
	if o.Doc, err = json.Marshal(hidden); err != nil {
		return false, err
	}
	o.Secret = secret
	return true, nil
}

// samlSigningCertificate returns the route's request-signing certificate, generating it and
// its key (ECDSA P-256, self-signed, ten years) the first time.
func samlSigningCertificate(w *write[*route], entityID string) (string, error) {
	var sec kinds.RouteSecret
	if len(w.secret) > 0 {
		if err := json.Unmarshal(w.secret, &sec); err != nil {
			return "", err
		}
	}
	if sec.SAMLCertificatePEM != "" {
		return sec.SAMLCertificatePEM, nil
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return "", err
	}
	now := w.c.s.opts.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: entityID},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.AddDate(10, 0, 0),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return "", err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return "", err
	}
	sec.SAMLCertificatePEM = string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	sec.SAMLKeyPEM = string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}))
	if w.secret, err = json.Marshal(sec); err != nil {
		return "", err
	}
	return sec.SAMLCertificatePEM, nil
}
