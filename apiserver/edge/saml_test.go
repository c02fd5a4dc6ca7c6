package edge_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"encoding/xml"
	"fmt"
	"html"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/crewjam/saml"
	"github.com/crewjam/saml/samlidp"

	"github.com/warrenhq/terraform-provider-warren/apiserver/edge"
	"github.com/warrenhq/terraform-provider-warren/internal/browsertest"
)

// samlEnv is an env whose edge's SAML service provider is mounted on the API server, a
// SAML IdP (crewjam/saml's samlidp, with its login form) on loopback with two users, and
// one route with a saml module on app.example.test in front of an app that shows what it
// received.
type samlEnv struct {
	*env
	idpURL          string
	idpCert         *x509.Certificate
	sso             atomic.Int64 // requests the IdP's SSO endpoint received
	clock           atomic.Int64 // how far the edge's session clock is ahead, in ns
	edgeID, routeID string
	request         map[string]any // the route's saml module as created
	module          map[string]any // the route's saml module, as the API shows it
}

const samlHost = "app.example.test"

func newSAMLEnv(t *testing.T, module map[string]any, routeFields ...map[string]any) *samlEnv {
	t.Helper()
	s := &samlEnv{}
	s.env = newEnv(t, func(o *edge.Options) {
		o.Now = func() time.Time { return time.Now().Add(time.Duration(s.clock.Load())) }
	})
	s.srv.SetSAMLHandler(s.edge.SAMLHandler())

	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: nextSerial(), Subject: pkix.Name{CommonName: "test IdP"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour), KeyUsage: x509.KeyUsageDigitalSignature}
	der, _ := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	cert, _ := x509.ParseCertificate(der)
	ts := httptest.NewUnstartedServer(nil)
	ts.StartTLS()
	t.Cleanup(ts.Close)
	s.idpURL, s.idpCert = ts.URL, ts.Certificate()
	u, _ := url.Parse(ts.URL)
	idp, err := samlidp.New(samlidp.Options{URL: *u, Key: key, Certificate: cert, Store: &samlidp.MemoryStore{}, Logger: log.New(io.Discard, "", 0)})
	if err != nil {
		t.Fatal(err)
	}
	ts.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/sso" {
			s.sso.Add(1)
		}
		idp.ServeHTTP(w, r)
	})
	s.idpPut("/users/alice", `{"password":"alice-pw","email":"alice@example.com","common_name":"Alice Liddell","groups":["staff","admins"]}`)
	s.idpPut("/users/bob", `{"password":"bob-pw","email":"bob@example.com","common_name":"Bob","groups":["interns"]}`)

	s.labelled("http", map[string]string{"app": "saml"}, "http://"+samlIdentityApp(t))
	group := s.create("/backends/tunnel_group", map[string]any{"labels": map[string]string{"app": "saml"}})
	module["enabled"] = true
	module["idp_metadata"] = s.idpGet("/metadata")
	s.request = module
	route := map[string]any{"saml": module}
	for _, f := range routeFields {
		for k, v := range f {
			route[k] = v
		}
	}
	s.edgeID, s.routeID = s.httpsEdge(samlHost, group, route)
	s.module = s.api("GET", "/edges/https/"+s.edgeID+"/routes/"+s.routeID, nil)["saml"].(map[string]any)
	s.idpPut("/services/app", s.metadata())
	s.idpPut("/shortcuts/app", fmt.Sprintf(`{"service_provider":%q,"relay_state":"/landing?from=idp"}`, s.module["entity_id"]))
	return s
}

// samlIdentityApp is an app that shows the identity headers, the cookies and any other
// Warren-Auth-* header it received.
func samlIdentityApp(t *testing.T) string {
	t.Helper()
	l := listen(t)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var other []string
		for k := range r.Header {
			switch k {
			case "Warren-Auth-Provider", "Warren-Auth-User-Id", "Warren-Auth-User-Email", "Warren-Auth-User-Name", "Warren-Auth-Groups":
			default:
				if strings.HasPrefix(k, "Warren-Auth-") {
					other = append(other, k)
				}
			}
		}
		h := r.Header
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, "<html><body><pre id=who>%s %s provider=%s sub=%s email=%s name=%s groups=%s other=%v cookie=%s</pre></body></html>",
			r.Method, r.URL.RequestURI(), h.Get("Warren-Auth-Provider"), h.Get("Warren-Auth-User-Id"), h.Get("Warren-Auth-User-Email"),
			h.Get("Warren-Auth-User-Name"), h.Get("Warren-Auth-Groups"), other, h.Get("Cookie"))
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return l.Addr().String()
}

func (s *samlEnv) idpDo(method, path, body string) string {
	s.t.Helper()
	req, _ := http.NewRequest(method, s.idpURL+path, strings.NewReader(body))
	resp, err := s.browserless(nil).Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		s.t.Fatalf("IdP %s %s: %d %s", method, path, resp.StatusCode, b)
	}
	return string(b)
}

func (s *samlEnv) idpPut(path, body string)  { s.idpDo("PUT", path, body) }
func (s *samlEnv) idpGet(path string) string { return s.idpDo("GET", path, "") }

// metadata fetches the route's SP metadata at its metadata_url.
func (s *samlEnv) metadata() string {
	s.t.Helper()
	resp, err := http.Get(s.module["metadata_url"].(string))
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/samlmetadata+xml" {
		s.t.Fatalf("metadata: %d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	return string(b)
}

// browserless is an HTTP client with a cookie jar (nil: none) that reaches app.example.test
// on the edge's HTTPS listener and everything else where it is, trusting the edge's CA and
// the IdP's certificate; it does not follow redirects.
func (s *samlEnv) browserless(jar http.CookieJar) *http.Client {
	pool := s.ca.pool()
	pool.AddCert(s.idpCert)
	return &http.Client{Jar: jar, Timeout: 20 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Transport: &http.Transport{
			DisableKeepAlives: true,
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				if strings.HasPrefix(addr, samlHost+":") {
					addr = s.https.Addr().String()
				}
				return (&net.Dialer{}).DialContext(ctx, network, addr)
			},
			TLSClientConfig: &tls.Config{RootCAs: pool},
		}}
}

type answer struct {
	status int
	header http.Header
	body   string
	url    string
}

func (s *samlEnv) send(c *http.Client, method, target string, form url.Values, hdr ...string) answer {
	s.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, _ := http.NewRequest(method, target, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, target, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.Header, string(b), target}
}

// follow sends GET target and follows the redirects; it returns the last answer.
func (s *samlEnv) follow(c *http.Client, a answer) answer {
	s.t.Helper()
	for range 10 {
		loc := a.header.Get("Location")
		if a.status < 300 || a.status > 399 || loc == "" {
			return a
		}
		u, _ := url.Parse(a.url)
		next, _ := u.Parse(loc)
		a = s.send(c, "GET", next.String(), nil)
	}
	s.t.Fatalf("too many redirects from %s", a.url)
	return a
}

var (
	formAction = regexp.MustCompile(`<form[^>]*action="([^"]*)"`)
	formInput  = regexp.MustCompile(`<input[^>]*name="([^"]+)"[^>]*value="([^"]*)"`)
)

// submit posts the page's form (the IdP's login form or its POST binding form) with its
// inputs and extra, and follows the redirects.
func (s *samlEnv) submit(c *http.Client, page answer, extra url.Values) answer {
	s.t.Helper()
	m := formAction.FindStringSubmatch(page.body)
	if m == nil {
		s.t.Fatalf("no form in %s: %d %s", page.url, page.status, page.body)
	}
	form := url.Values{}
	for _, in := range formInput.FindAllStringSubmatch(page.body, -1) {
		form.Set(in[1], html.UnescapeString(in[2]))
	}
	for k, v := range extra {
		form[k] = v
	}
	base, _ := url.Parse(page.url)
	action, _ := base.Parse(html.UnescapeString(m[1]))
	return s.follow(c, s.send(c, "POST", action.String(), form))
}

// login signs user in with a browserless client: the page, the IdP's login form, its
// answer posted to the ACS, the handoff to the route's host, the page again. It returns
// the last answer.
func (s *samlEnv) login(c *http.Client, page, user, password string) answer {
	s.t.Helper()
	form := s.toIdP(c, page)
	posted := s.submit(c, form, url.Values{"user": {user}, "password": {password}}) // the IdP's POST form to the ACS
	return s.submit(c, posted, nil)
}

// toIdP visits page without a session: the edge's POST binding form takes the visitor to
// the IdP, whose answer it returns.
func (s *samlEnv) toIdP(c *http.Client, page string) answer {
	s.t.Helper()
	a := s.follow(c, s.send(c, "GET", page, nil))
	if a.status != 200 || !strings.Contains(a.body, `action="`+s.idpURL+`/sso"`) {
		s.t.Fatalf("GET %s: not sent to the IdP: %d %v %s", page, a.status, a.header, a.body)
	}
	return s.submit(c, a, nil)
}

func newJar() http.CookieJar {
	jar, _ := cookiejar.New(nil)
	return jar
}

// The login in a real browser: the visitor is sent to the IdP's login page, signs in, comes
// back to the page with the session cookie, and the app gets the identity headers but not
// the cookie; the session serves without the IdP until it expires, then the visitor goes
// back to the IdP.
func TestSAMLBrowserLogin(t *testing.T) {
	s := newSAMLEnv(t, map[string]any{"nameid_format": string(saml.EmailAddressNameIDFormat), "authorized_groups": []string{"admins"}, "maximum_duration": 3600})
	_, port, _ := net.SplitHostPort(s.https.Addr().String())
	page := "https://" + samlHost + ":" + port + "/page?x=1"
	ctx := browsertest.New(t)
	if err := chromedp.Do(ctx,
		chromedp.Navigate(page),
		chromedp.WaitVisible(chromedp.CSS(`input[name=user]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name=user]`), "alice"),
		chromedp.SendKeys(chromedp.CSS(`input[name=password]`), "alice-pw"),
		chromedp.Click(chromedp.CSS(`input[type=submit]`)),
		chromedp.WaitVisible(chromedp.ID("who")),
	); err != nil {
		t.Fatal(err)
	}
	who := browserText(t, ctx)
	want := "GET /page?x=1 provider=saml sub=alice@example.com email=alice@example.com name=Alice Liddell groups=staff,admins other=[] cookie="
	if !strings.HasPrefix(who, want) || strings.Contains(who, "warren_session") {
		t.Fatalf("the app received %q, want %q without the session cookie", who, want)
	}
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil || loc != page {
		t.Fatalf("the browser is at %q (%v), want %q", loc, err, page)
	}

	// The session serves on its own.
	before := s.sso.Load()
	if err := chromedp.Do(ctx, chromedp.Navigate(page), chromedp.WaitVisible(chromedp.ID("who"))); err != nil {
		t.Fatal(err)
	}
	if got := s.sso.Load(); got != before {
		t.Fatalf("a live session went to the IdP (%d SSO requests, was %d)", got, before)
	}

	// Past maximum_duration the visitor goes back to the IdP (which still has its own
	// session, so it answers at once) and comes back with a new session.
	s.clock.Store(int64(2 * time.Hour))
	if err := chromedp.Do(ctx, chromedp.Navigate(page), chromedp.WaitVisible(chromedp.ID("who"))); err != nil {
		t.Fatal(err)
	}
	if got := s.sso.Load(); got <= before {
		t.Fatal("an expired session was not sent to the IdP")
	}
	if who := browserText(t, ctx); !strings.HasPrefix(who, want) {
		t.Fatalf("after the new login the app received %q", who)
	}
}

func browserText(t *testing.T, ctx context.Context) string {
	t.Helper()
	who, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("who")))
	if err != nil {
		t.Fatal(err)
	}
	return who
}

// authorized_groups: a user in none of them is refused at the ACS; a member gets in.
func TestSAMLAuthorizedGroups(t *testing.T) {
	s := newSAMLEnv(t, map[string]any{"nameid_format": string(saml.EmailAddressNameIDFormat), "authorized_groups": []string{"staff"}})
	bob := s.login(s.browserless(newJar()), "https://"+samlHost+"/", "bob", "bob-pw")
	if bob.status != 403 || bob.header.Get("Warren-Error-Code") != "ERR_8040" {
		t.Fatalf("bob (interns): %d %s %q", bob.status, bob.header.Get("Warren-Error-Code"), bob.body)
	}
	// A page whose path starts with "//" is still a page of the route's host after the login.
	alice := s.login(s.browserless(newJar()), "https://"+samlHost+"//elsewhere.example/x", "alice", "alice-pw")
	if alice.status != 200 || alice.url != "https://"+samlHost+"//elsewhere.example/x" || !strings.Contains(alice.body, "GET //elsewhere.example/x provider=saml sub=alice@example.com") {
		t.Fatalf("alice (staff): %d %s %q", alice.status, alice.url, alice.body)
	}
}

// The identity headers cannot be forged: with a session the app gets the IdP's identity
// whatever the visitor sends, and through options_passthrough it gets none; the logout
// path ends the session.
func TestSAMLIdentityNotForgeable(t *testing.T) {
	s := newSAMLEnv(t, map[string]any{"nameid_format": string(saml.EmailAddressNameIDFormat), "options_passthrough": true})
	c := s.browserless(newJar())
	if a := s.login(c, "https://"+samlHost+"/", "alice", "alice-pw"); a.status != 200 {
		t.Fatalf("login: %d %q", a.status, a.body)
	}
	forged := []string{"Warren-Auth-User-Email", "mallory@example.com", "warren-auth-groups", "admins", "Warren-Auth-Role", "root", "Cookie", "app=1"}
	a := s.send(c, "GET", "https://"+samlHost+"/x", nil, forged...)
	if a.status != 200 || !strings.Contains(a.body, "email=alice@example.com name=Alice Liddell groups=staff,admins other=[] cookie=app=1<") {
		t.Fatalf("with forged headers the app received: %d %q", a.status, a.body)
	}
	anon := s.send(s.browserless(nil), "OPTIONS", "https://"+samlHost+"/x", nil, forged...)
	if anon.status != 200 || !strings.Contains(anon.body, "OPTIONS /x provider= sub= email= name= groups= other=[] cookie=app=1<") {
		t.Fatalf("OPTIONS passed through: %d %q", anon.status, anon.body)
	}
	if a := s.send(c, "GET", "https://"+samlHost+"/_warren/auth/logout", nil); a.status != 200 {
		t.Fatalf("logout: %d %q", a.status, a.body)
	}
	s.toIdP(c, "https://"+samlHost+"/x") // the session is over
}

// An unsolicited (IdP-initiated) answer signs in only with allow_idp_initiated, landing on
// the RelayState's path; an answer or a handoff to the route is taken once.
func TestSAMLIdPInitiated(t *testing.T) {
	s := newSAMLEnv(t, map[string]any{"nameid_format": string(saml.EmailAddressNameIDFormat), "allow_idp_initiated": true})
	c := s.browserless(newJar())
	if a := s.send(c, "POST", s.idpURL+"/login", url.Values{"user": {"alice"}, "password": {"alice-pw"}}); a.status != 200 {
		t.Fatalf("IdP login: %d %q", a.status, a.body)
	}
	posted := s.send(c, "GET", s.idpURL+"/login/app", nil)
	a := s.submit(c, posted, nil)
	if a.status != 200 || !strings.Contains(a.body, "GET /landing?from=idp provider=saml sub=alice@example.com") {
		t.Fatalf("IdP-initiated, allowed: %d %q", a.status, a.body)
	}

	// The same answer again, and the same handoff again, are refused.
	again := s.submit(s.browserless(newJar()), posted, nil)
	if again.status != 403 || again.header.Get("Warren-Error-Code") != "ERR_8041" {
		t.Fatalf("a replayed answer: %d %q", again.status, again.body)
	}
	fresh := s.send(c, "GET", s.idpURL+"/login/app", nil)
	m := formAction.FindStringSubmatch(fresh.body)
	form := url.Values{}
	for _, in := range formInput.FindAllStringSubmatch(fresh.body, -1) {
		form.Set(in[1], html.UnescapeString(in[2]))
	}
	handoff := s.send(c, "POST", html.UnescapeString(m[1]), form)
	if handoff.status != 303 {
		t.Fatalf("ACS: %d %q", handoff.status, handoff.body)
	}
	first := s.send(s.browserless(nil), "GET", handoff.header.Get("Location"), nil)
	second := s.send(s.browserless(nil), "GET", handoff.header.Get("Location"), nil)
	if first.status != 302 || second.status != 403 || second.header.Get("Warren-Error-Code") != "ERR_8041" {
		t.Fatalf("handoff used twice: %d then %d %q", first.status, second.status, second.body)
	}

	s.request["allow_idp_initiated"] = false
	s.api("PATCH", "/edges/https/"+s.edgeID+"/routes/"+s.routeID, map[string]any{"saml": s.request})
	refused := s.submit(c, s.send(c, "GET", s.idpURL+"/login/app", nil), nil)
	if refused.status != 403 || refused.header.Get("Warren-Error-Code") != "ERR_8041" {
		t.Fatalf("IdP-initiated, not allowed: %d %q", refused.status, refused.body)
	}
	// An SP-initiated login still works.
	sp := s.login(s.browserless(newJar()), "https://"+samlHost+"/sp", "alice", "alice-pw")
	if sp.status != 200 || !strings.Contains(sp.body, "GET /sp provider=saml sub=alice@example.com") {
		t.Fatalf("SP-initiated after the change: %d %q", sp.status, sp.body)
	}
}

// The SP metadata at metadata_url names the route's entity ID, ACS and SLO URLs and its
// signing certificate; the AuthnRequest is signed and carries force_authn and nameid_format.
func TestSAMLMetadataAndRequest(t *testing.T) {
	s := newSAMLEnv(t, map[string]any{"nameid_format": string(saml.TransientNameIDFormat), "force_authn": true})
	var md saml.EntityDescriptor
	if err := xml.Unmarshal([]byte(s.metadata()), &md); err != nil {
		t.Fatal(err)
	}
	certBlock, _ := pem.Decode([]byte(s.module["request_signing_certificate_pem"].(string)))
	sp := md.SPSSODescriptors[0]
	if md.EntityID != s.module["entity_id"] || md.EntityID != s.srv.URL+"/saml/"+s.routeID ||
		sp.AssertionConsumerServices[0].Location != s.module["assertion_consumer_service_url"] ||
		sp.SingleLogoutServices[0].Location != s.module["single_logout_url"] ||
		sp.KeyDescriptors[0].Use != "signing" ||
		sp.KeyDescriptors[0].KeyInfo.X509Data.X509Certificates[0].Data != base64.StdEncoding.EncodeToString(certBlock.Bytes) {
		t.Fatalf("metadata: %+v", md)
	}

	a := s.send(s.browserless(nil), "GET", "https://"+samlHost+"/deep/page", nil)
	fields := map[string]string{}
	for _, in := range formInput.FindAllStringSubmatch(a.body, -1) {
		fields[in[1]] = html.UnescapeString(in[2])
	}
	if a.status != 200 || !strings.Contains(a.body, `action="`+s.idpURL+`/sso"`) || fields["RelayState"] == "" {
		t.Fatalf("to the IdP: %d %s", a.status, a.body)
	}
	signed, _ := base64.StdEncoding.DecodeString(fields["SAMLRequest"])
	var req saml.AuthnRequest
	if err := xml.Unmarshal(signed, &req); err != nil {
		t.Fatal(err)
	}
	if req.Signature == nil || !bytes.Contains(signed, []byte(`Algorithm="http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha256"`)) {
		t.Fatalf("AuthnRequest not signed: %s", signed)
	}
	inflated := signed
	if req.ForceAuthn == nil || !*req.ForceAuthn || *req.NameIDPolicy.Format != string(saml.TransientNameIDFormat) ||
		req.AssertionConsumerServiceURL != s.module["assertion_consumer_service_url"] || req.Issuer.Value != s.module["entity_id"] {
		t.Fatalf("AuthnRequest: %s", inflated)
	}

	// Another route's ID, or none with saml, is not served.
	if resp, err := http.Get(s.srv.URL + "/saml/rt_nothing"); err != nil || resp.StatusCode != 404 {
		t.Fatalf("unknown route: %v %v", resp, err)
	}
}

// The IdP's single logout reaches single_logout_url: the user's session on the route ends
// and the IdP gets its LogoutResponse.
func TestSAMLSingleLogout(t *testing.T) {
	s := newSAMLEnv(t, map[string]any{"nameid_format": string(saml.EmailAddressNameIDFormat)})
	c := s.browserless(newJar())
	if a := s.login(c, "https://"+samlHost+"/", "alice", "alice-pw"); a.status != 200 {
		t.Fatalf("login: %d %q", a.status, a.body)
	}
	logout := s.send(c, "GET", s.idpURL+"/logout", nil)
	if loc := logout.header.Get("Location"); logout.status != 302 || !strings.HasPrefix(loc, s.module["single_logout_url"].(string)+"?SAMLRequest=") {
		t.Fatalf("the IdP's logout does not go to single_logout_url: %d %s", logout.status, loc)
	}
	answered := s.follow(c, logout)
	if answered.status != 200 || !strings.Contains(answered.body, `name="SAMLResponse"`) || !strings.Contains(answered.body, `action="`+s.idpURL+`/slo"`) {
		t.Fatalf("the SP's answer: %d %s", answered.status, answered.body)
	}
	if done := s.submit(c, answered, nil); done.status != 200 {
		t.Fatalf("the IdP took the LogoutResponse: %d %s", done.status, done.body)
	}
	s.toIdP(c, "https://"+samlHost+"/") // the session is over
}

// The reserved paths reach the route with the saml module whatever its match: another
// route of the edge that matches them never sees them.
func TestSAMLReservedPathsOnAPrefixRoute(t *testing.T) {
	s := newSAMLEnv(t, map[string]any{"nameid_format": string(saml.EmailAddressNameIDFormat)}, map[string]any{"match": "/app"})
	public := s.create("/backends/http_response", map[string]any{"status_code": 200, "body": "public"})
	s.create("/edges/https/"+s.edgeID+"/routes", map[string]any{"match_type": "path_prefix", "match": "/", "backend": map[string]any{"backend_id": public}})
	c := s.browserless(newJar())
	if a := s.send(c, "GET", "https://"+samlHost+"/", nil); a.status != 200 || a.body != "public" {
		t.Fatalf("the public route: %d %q", a.status, a.body)
	}
	if a := s.login(c, "https://"+samlHost+"/app/page", "alice", "alice-pw"); a.status != 200 || !strings.Contains(a.body, "GET /app/page provider=saml sub=alice@example.com") {
		t.Fatalf("login on /app: %d %q", a.status, a.body)
	}
	if a := s.send(c, "GET", "https://"+samlHost+"/_warren/auth/other", nil); a.status != 404 || a.header.Get("Warren-Error-Code") != "ERR_8044" {
		t.Fatalf("an unknown reserved path: %d %q", a.status, a.body)
	}
}

// inactivity_timeout counts from the last request: a session in use goes on past it, an
// idle one ends.
func TestSAMLInactivityTimeout(t *testing.T) {
	s := newSAMLEnv(t, map[string]any{"nameid_format": string(saml.EmailAddressNameIDFormat), "inactivity_timeout": 600})
	c := s.browserless(newJar())
	if a := s.login(c, "https://"+samlHost+"/", "alice", "alice-pw"); a.status != 200 {
		t.Fatalf("login: %d %q", a.status, a.body)
	}
	for _, ahead := range []time.Duration{5 * time.Minute, 12 * time.Minute, 19 * time.Minute} {
		s.clock.Store(int64(ahead))
		if a := s.send(c, "GET", "https://"+samlHost+"/", nil); a.status != 200 || !strings.Contains(a.body, "sub=alice@example.com") {
			t.Fatalf("%v after the login, 7 minutes after the last request: %d %q", ahead, a.status, a.body)
		}
	}
	s.clock.Store(int64(30 * time.Minute))
	s.toIdP(c, "https://"+samlHost+"/") // 11 minutes idle: over
}
