package webhook_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/warrenhq/terraform-provider-warren/internal/rules"
	"github.com/warrenhq/terraform-provider-warren/internal/webhook"
)

const (
	hookURL = "https://hooks.example.test/in?x=1"
	secret  = "s3cr3t-key"
)

var body = []byte(`{"event":"ping","n":1}`)

// signed is a request as a provider sends it.
type signed struct {
	header http.Header
	body   []byte
	url    string
}

func mac(h func() hash.Hash, key, msg string) []byte {
	m := hmac.New(h, []byte(key))
	m.Write([]byte(msg))
	return m.Sum(nil)
}

func hx(b []byte) string  { return hex.EncodeToString(b) }
func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

func hdr(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	return h
}

// bodyOnly signs the body alone into header as prefix + encoded MAC.
func bodyOnly(header, prefix string, h func() hash.Hash, enc func([]byte) string) func(string, time.Time) signed {
	return func(key string, _ time.Time) signed {
		return signed{header: hdr(header, prefix+enc(mac(h, key, string(body))))}
	}
}

func stripeStyle(header, sigKey string) func(string, time.Time) signed {
	return func(key string, now time.Time) signed {
		ts := strconv.FormatInt(now.Unix(), 10)
		return signed{header: hdr(header, "t="+ts+","+sigKey+"="+hx(mac(sha256.New, key, ts+"."+string(body))))}
	}
}

func slackStyle(header, tsHeader string) func(string, time.Time) signed {
	return func(key string, now time.Time) signed {
		ts := strconv.FormatInt(now.Unix(), 10)
		return signed{header: hdr(header, "v0="+hx(mac(sha256.New, key, "v0:"+ts+":"+string(body))), tsHeader, ts)}
	}
}

func svixStyle(prefix string) func(string, time.Time) signed {
	return func(key string, now time.Time) signed {
		raw, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(key, "whsec_"))
		ts := strconv.FormatInt(now.Unix(), 10)
		return signed{header: hdr(prefix+"-id", "msg_1", prefix+"-timestamp", ts,
			prefix+"-signature", "v1,bm90IGl0 v1,"+b64(mac(sha256.New, string(raw), "msg_1."+ts+"."+string(body))))}
	}
}

var github = bodyOnly("X-Hub-Signature-256", "sha256=", sha256.New, hx)

// signers sign a request the way each provider documents, written apart from the package's
// table so that the two check each other.
var signers = map[string]func(key string, now time.Time) signed{
	"aftership": bodyOnly("aftership-hmac-sha256", "", sha256.New, b64),
	"airship": func(key string, now time.Time) signed {
		ts := strconv.FormatInt(now.Unix(), 10)
		return signed{header: hdr("X-UA-Timestamp", ts, "X-UA-Signature", hx(mac(sha256.New, key, ts+":"+string(body))))}
	},
	"autodesk":  bodyOnly("x-adsk-signature", "sha1hash=", sha1.New, hx),
	"bitbucket": bodyOnly("X-Hub-Signature", "sha256=", sha256.New, hx),
	"bolt":      bodyOnly("X-Bolt-Hmac-Sha256", "", sha256.New, b64),
	"box": func(key string, now time.Time) signed {
		ts := now.UTC().Format(time.RFC3339)
		return signed{header: hdr("box-delivery-timestamp", ts, "box-signature-secondary", b64(mac(sha256.New, key, string(body)+ts)))}
	},
	"brex": svixStyle("webhook"),
	"buildkite": func(key string, now time.Time) signed {
		ts := strconv.FormatInt(now.Unix(), 10)
		return signed{header: hdr("X-Buildkite-Signature", "timestamp="+ts+",signature="+hx(mac(sha256.New, key, ts+"."+string(body))))}
	},
	"calendly":           stripeStyle("Calendly-Webhook-Signature", "v1"),
	"castle":             bodyOnly("X-Castle-Signature", "", sha256.New, b64),
	"chargify":           bodyOnly("X-Chargify-Webhook-Signature-Hmac-Sha-256", "", sha256.New, hx),
	"circleci":           bodyOnly("circleci-signature", "v1=", sha256.New, hx),
	"clearbit":           bodyOnly("X-Request-Signature", "sha1=", sha1.New, hx),
	"clerk":              svixStyle("svix"),
	"coinbase":           bodyOnly("X-CC-Webhook-Signature", "", sha256.New, hx),
	"docusign":           bodyOnly("X-DocuSign-Signature-1", "", sha256.New, b64),
	"dropbox":            bodyOnly("X-Dropbox-Signature", "", sha256.New, hx),
	"facebook_graph_api": github,
	"facebook_messenger": bodyOnly("X-Hub-Signature", "sha1=", sha1.New, hx),
	"frameio":            slackStyle("X-Frameio-Signature", "X-Frameio-Request-Timestamp"),
	"github":             github,
	"gitlab":             func(key string, _ time.Time) signed { return signed{header: hdr("X-Gitlab-Token", key)} },
	"go1":                stripeStyle("Go1-Signature", "v1"),
	"heroku":             bodyOnly("Heroku-Webhook-Hmac-SHA256", "", sha256.New, b64),
	"hostedhooks":        stripeStyle("HostedHooks-Signature", "s"),
	"hubspot": func(key string, now time.Time) signed {
		ts := strconv.FormatInt(now.UnixMilli(), 10)
		return signed{header: hdr("X-HubSpot-Request-Timestamp", ts, "X-HubSpot-Signature-v3", b64(mac(sha256.New, key, "POST"+hookURL+string(body)+ts)))}
	},
	"graphcms": func(key string, now time.Time) signed {
		t := now.UnixMilli()
		payload, _ := json.Marshal(map[string]any{"Body": string(body), "EnvironmentName": "master", "TimeStamp": t})
		return signed{header: hdr("gcms-signature", fmt.Sprintf("sign=%s, env=master, t=%d", b64(mac(sha256.New, key, string(payload))), t))}
	},
	"instagram":     github,
	"intercom":      bodyOnly("X-Hub-Signature", "sha1=", sha1.New, hx),
	"launch_darkly": bodyOnly("X-LD-Signature", "", sha256.New, hx),
	"mailchimp": func(key string, _ time.Time) signed {
		form := []byte("mandrill_events=%5B%5D&b=2")
		return signed{body: form, header: hdr("Content-Type", "application/x-www-form-urlencoded",
			"X-Mandrill-Signature", b64(mac(sha1.New, key, hookURL+"b2mandrill_events[]")))}
	},
	"mailgun": func(key string, _ time.Time) signed {
		b := fmt.Sprintf(`{"signature":{"timestamp":"1529006854","token":"a8ce0edb2dd8","signature":%q},"event-data":{}}`,
			hx(mac(sha256.New, key, "1529006854a8ce0edb2dd8")))
		return signed{body: []byte(b), header: hdr("Content-Type", "application/json")}
	},
	"microsoft_teams": func(key string, _ time.Time) signed {
		raw, _ := base64.StdEncoding.DecodeString(key)
		return signed{header: hdr("Authorization", "HMAC "+b64(mac(sha256.New, string(raw), string(body))))}
	},
	"modern_treasury": bodyOnly("X-Signature", "", sha256.New, hx),
	"mongodb":         bodyOnly("X-MMS-Signature", "", sha1.New, b64),
	"mux":             stripeStyle("Mux-Signature", "v1"),
	"pagerduty": func(key string, _ time.Time) signed {
		return signed{header: hdr("X-PagerDuty-Signature", "v1=00ff,v1="+hx(mac(sha256.New, key, string(body))))}
	},
	"pinwheel": func(key string, now time.Time) signed {
		ts := strconv.FormatInt(now.Unix(), 10)
		return signed{header: hdr("x-timestamp", ts, "x-pinwheel-signature", "v2="+hx(mac(sha256.New, key, "v2:"+ts+":"+string(body))))}
	},
	"plivo": func(key string, _ time.Time) signed {
		return signed{header: hdr("X-Plivo-Signature-V2-Nonce", "05429567804466091622",
			"X-Plivo-Signature-V2", b64(mac(sha256.New, key, "https://hooks.example.test/in05429567804466091622")))}
	},
	"pusher":          bodyOnly("X-Pusher-Signature", "", sha256.New, hx),
	"sentry":          bodyOnly("Sentry-Hook-Signature", "", sha256.New, hx),
	"shopify":         bodyOnly("X-Shopify-Hmac-Sha256", "", sha256.New, b64),
	"signal_sciences": bodyOnly("X-SigSci-Signature", "", sha256.New, hx),
	"slack":           slackStyle("X-Slack-Signature", "X-Slack-Request-Timestamp"),
	"sonatype":        bodyOnly("X-Nexus-Webhook-Signature", "", sha1.New, hx),
	"square": func(key string, _ time.Time) signed {
		return signed{header: hdr("x-square-hmacsha256-signature", b64(mac(sha256.New, key, hookURL+string(body))))}
	},
	"stripe":                stripeStyle("Stripe-Signature", "v1"),
	"svix":                  svixStyle("svix"),
	"terraform":             bodyOnly("X-TFE-Notification-Signature", "", sha512.New, hx),
	"tiktok":                stripeStyle("TikTok-Signature", "s"),
	"trendmicro_conformity": bodyOnly("X-Conformity-Signature", "", sha256.New, hx),
	"twilio": func(key string, _ time.Time) signed {
		form := []byte("To=%2B18005551212&From=%2B14158675309")
		return signed{body: form, header: hdr("Content-Type", "application/x-www-form-urlencoded",
			"X-Twilio-Signature", b64(mac(sha1.New, key, hookURL+"From+14158675309To+18005551212")))}
	},
	"twitter":  bodyOnly("X-Twitter-Webhooks-Signature", "sha256=", sha256.New, b64),
	"typeform": bodyOnly("Typeform-Signature", "sha256=", sha256.New, b64),
	"vmware": func(key string, _ time.Time) signed {
		user, pass, _ := strings.Cut(key, "::")
		return signed{header: hdr("Authorization", "Basic "+b64([]byte(user+":"+pass)))}
	},
	"webex":     bodyOnly("X-Spark-Signature", "", sha1.New, hx),
	"whatsapp":  github,
	"worldline": bodyOnly("X-GCS-Signature", "", sha256.New, b64),
	"xero":      bodyOnly("x-xero-signature", "", sha256.New, b64),
	"zendesk": func(key string, now time.Time) signed {
		ts := now.UTC().Format(time.RFC3339)
		return signed{header: hdr("X-Zendesk-Webhook-Signature-Timestamp", ts, "X-Zendesk-Webhook-Signature", b64(mac(sha256.New, key, ts+string(body))))}
	},
	"zoom": slackStyle("x-zm-signature", "x-zm-request-timestamp"),
	"contentful": func(key string, now time.Time) signed {
		ts := strconv.FormatInt(now.UnixMilli(), 10)
		canonical := "POST\n/in?x=1\nx-contentful-timestamp:" + ts + ";content-type:application/json\n" + string(body)
		return signed{header: hdr("Content-Type", "application/json", "x-contentful-timestamp", ts,
			"x-contentful-signed-headers", "x-contentful-timestamp,content-type", "x-contentful-signature", hx(mac(sha256.New, key, canonical)))}
	},
}

// sendgridKey is a SendGrid verification key pair: the secret is the public key.
var sendgridKey, _ = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)

func init() {
	signers["sendgrid"] = func(key string, now time.Time) signed {
		priv := sendgridKey
		if key != secretOf("sendgrid") {
			priv, _ = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		}
		ts := strconv.FormatInt(now.Unix(), 10)
		sum := sha256.Sum256([]byte(ts + string(body)))
		sig, _ := ecdsa.SignASN1(rand.Reader, priv, sum[:])
		return signed{header: hdr("X-Twilio-Email-Event-Webhook-Timestamp", ts, "X-Twilio-Email-Event-Webhook-Signature", b64(sig))}
	}
}

// secretOf is the module's secret for provider: the shape its scheme needs.
func secretOf(provider string) string { return shaped(provider, secret) }

// otherSecret is a secret of the same shape that is not the module's.
func otherSecret(provider string) string {
	if provider == "sendgrid" {
		other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		der, _ := x509.MarshalPKIXPublicKey(&other.PublicKey)
		return b64(der)
	}
	return shaped(provider, "another-key")
}

func shaped(provider, key string) string {
	switch provider {
	case "microsoft_teams":
		return b64([]byte(key))
	case "svix", "clerk", "brex":
		return "whsec_" + b64([]byte(key))
	case "vmware":
		return "hooks::" + key
	case "sendgrid":
		der, _ := x509.MarshalPKIXPublicKey(&sendgridKey.PublicKey)
		return b64(der)
	}
	return key
}

func request(s signed, now time.Time) *webhook.Request {
	b := body
	if s.body != nil {
		b = s.body
	}
	return &webhook.Request{Method: "POST", URL: hookURL, Header: s.header, Body: slices.Clone(b), Now: now}
}

// TestProviders: for every provider of the module, a request signed the documented way
// passes; one without the signature, signed with another secret, with a changed body, or
// (where the provider has a tolerance) signed too long ago, is refused.
func TestProviders(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	for _, provider := range rules.WebhookProviders {
		t.Run(provider, func(t *testing.T) {
			v, err := webhook.New(strings.ToUpper(provider), secretOf(provider), webhook.Options{})
			if provider == "orbit" {
				if !errors.Is(err, webhook.ErrUnsupported) {
					t.Fatalf("orbit: %v, want ErrUnsupported", err)
				}
				return
			}
			if provider == "sns" {
				return // TestSNS
			}
			if err != nil {
				t.Fatal(err)
			}
			sign := signers[provider]
			if sign == nil {
				t.Fatal("no signer for the provider")
			}
			ctx := t.Context()
			if err := v.Verify(ctx, request(sign(secretOf(provider), now), now)); err != nil {
				t.Fatalf("a signed request: %v", err)
			}
			if err := v.Verify(ctx, request(signed{header: hdr("Content-Type", "application/json")}, now)); !errors.Is(err, webhook.ErrMissing) {
				t.Fatalf("no signature: %v, want ErrMissing", err)
			}
			if err := v.Verify(ctx, request(sign(otherSecret(provider), now), now)); !errors.Is(err, webhook.ErrInvalid) {
				t.Fatalf("another secret: %v, want ErrInvalid", err)
			}
			tampered := request(sign(secretOf(provider), now), now)
			tampered.Body = append(tampered.Body, ' ')
			if !slices.Contains([]string{"mailgun", "gitlab", "vmware", "plivo"}, provider) { // the body is not what they sign
				if err := v.Verify(ctx, tampered); err == nil {
					t.Fatal("a changed body passed")
				}
			}
			if tol := webhook.Tolerance(provider); tol > 0 {
				then := now.Add(-tol - time.Minute)
				if err := v.Verify(ctx, request(sign(secretOf(provider), then), now)); !errors.Is(err, webhook.ErrStale) {
					t.Fatalf("signed %s ago: %v, want ErrStale", tol+time.Minute, err)
				}
			}
		})
	}
	if extra := slices.DeleteFunc(slices.Collect(maps.Keys(signers)), func(p string) bool { return slices.Contains(rules.WebhookProviders, p) }); len(extra) > 0 {
		t.Fatalf("signers of providers the module does not take: %v", extra)
	}
}

// TestAlternatives: the other headers and forms a provider signs with pass too.
func TestAlternatives(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	for name, c := range map[string]struct {
		provider string
		sign     func(string, time.Time) signed
	}{
		"aftership am-webhook-signature": {"aftership", bodyOnly("am-webhook-signature", "hmac-sha256=", sha256.New, b64)},
		"aftership returns":              {"aftership", bodyOnly("as-signature-hmac-sha256", "", sha256.New, b64)},
		"github SHA-1":                   {"github", bodyOnly("X-Hub-Signature", "sha1=", sha1.New, hx)},
		"docusign second key":            {"docusign", bodyOnly("X-DocuSign-Signature-2", "", sha256.New, b64)},
		"mongodb App Services":           {"mongodb", bodyOnly("Endpoint-Signature", "sha256=", sha256.New, hx)},
		"square SHA-1": {"square", func(key string, _ time.Time) signed {
			return signed{header: hdr("X-Square-Signature", b64(mac(sha1.New, key, hookURL+string(body))))}
		}},
		"buildkite token": {"buildkite", func(key string, _ time.Time) signed { return signed{header: hdr("X-Buildkite-Token", key)} }},
		"svix unbranded":  {"svix", svixStyle("webhook")},
		"box primary": {"box", func(key string, now time.Time) signed {
			ts := now.UTC().Format(time.RFC3339)
			return signed{header: hdr("box-delivery-timestamp", ts, "box-signature-primary", b64(mac(sha256.New, key, string(body)+ts)))}
		}},
		"zendesk body then timestamp": {"zendesk", func(key string, now time.Time) signed {
			ts := now.UTC().Format(time.RFC3339)
			return signed{header: hdr("X-Zendesk-Webhook-Signature-Timestamp", ts, "X-Zendesk-Webhook-Signature", b64(mac(sha256.New, key, string(body)+ts)))}
		}},
		"plivo main account V2": {"plivo", func(key string, _ time.Time) signed {
			return signed{header: hdr("X-Plivo-Signature-V2-Nonce", "7", "X-Plivo-Signature-Ma-V2", b64(mac(sha256.New, key, "https://hooks.example.test/in7")))}
		}},
	} {
		v, err := webhook.New(c.provider, secretOf(c.provider), webhook.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := v.Verify(t.Context(), request(c.sign(secretOf(c.provider), now), now)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if err := v.Verify(t.Context(), request(c.sign(otherSecret(c.provider), now), now)); !errors.Is(err, webhook.ErrInvalid) {
			t.Errorf("%s with another secret: %v", name, err)
		}
	}
}

// TestPublishedExamples: the example signatures providers publish pass, with a changed
// byte they do not.
func TestPublishedExamples(t *testing.T) {
	slackBody := "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c"
	boxBody := `{"type":"webhook_event","webhook":{"id":"1234567890"},"trigger":"FILE.UPLOADED","source":{"id":"1234567890","type":"file","name":"Test.txt"}}`
	boxHeader := hdr("box-delivery-timestamp", "2020-01-01T00:00:00-07:00", "box-signature-primary", "6TfeAW3A1PASkgboxxA5yqHNKOwFyMWuEXny/FPD5hI=",
		"box-signature-secondary", "v+1CD1Jdo3muIcbpv5lxxgPglOqMfsNHPV899xWYydo=")
	twilioForm := "CallSid=CA1234567890ABCDE&Caller=%2B14158675309&Digits=1234&From=%2B14158675309&To=%2B18005551212"
	for _, c := range []struct {
		name, provider, secret, url, body string
		header                            http.Header
		now                               time.Time
	}{
		// api.slack.com/authentication/verifying-requests-from-slack
		{"slack", "slack", "8f742231b10e8888abcd99yyyzzz85a5", hookURL, slackBody,
			hdr("X-Slack-Request-Timestamp", "1531420618", "X-Slack-Signature", "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503"), time.Unix(1531420618, 0)},
		// docs.github.com: validating webhook deliveries
		{"github", "github", "It's a Secret to Everybody", hookURL, "Hello, World!",
			hdr("X-Hub-Signature-256", "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"), time.Now()},
		// twilio.com/docs/usage/security and the Twilio libraries' tests
		{"twilio form", "twilio", "12345", "https://mycompany.com/myapp.php?foo=1&bar=2", twilioForm,
			hdr("Content-Type", "application/x-www-form-urlencoded", "X-Twilio-Signature", "RSOYDt4T1cUTdK1PDd93/VVr8B8="), time.Now()},
		{"twilio form, duplicated values", "twilio", "12345", "https://mycompany.com/myapp.php?foo=1&bar=2", "Sid=CA123&SidAccount=AC123&Digits=5678&Digits=1234&Digits=1234",
			hdr("Content-Type", "application/x-www-form-urlencoded", "X-Twilio-Signature", "IK+Dwps556ElfBT0I3Rgjkr1wJU="), time.Now()},
		{"twilio signed with the port", "twilio", "12345", "https://mycompany.com/myapp.php?foo=1&bar=2", twilioForm,
			hdr("Content-Type", "application/x-www-form-urlencoded", "X-Twilio-Signature", "kvajT1Ptam85bY51eRf/AJRuM3w="), time.Now()},
		{"twilio JSON body", "twilio", "12345", "https://mycompany.com/myapp.php?foo=1&bar=2&bodySHA256=0a1ff7634d9ab3b95db5c9a2dfe9416e41502b283a80c7cf19632632f96e6620",
			`{"property": "value", "boolean": true}`, hdr("Content-Type", "application/json", "X-Twilio-Signature", "a9nBmqA0ju/hNViExpshrM61xv4="), time.Now()},
		// developer.box.com: signature verification (the Box SDKs' sample, keys SamplePrimaryKey and SampleSecondaryKey)
		{"box primary", "box", "SamplePrimaryKey", hookURL, boxBody, boxHeader, time.Date(2020, 1, 1, 7, 5, 0, 0, time.UTC)},
		{"box secondary", "box", "SampleSecondaryKey", hookURL, boxBody, boxHeader, time.Date(2020, 1, 1, 7, 5, 0, 0, time.UTC)},
		// developer.zendesk.com: verifying webhook authenticity
		{"zendesk", "zendesk", "HRkRd4BeOAoUkfZr-mhauJT64rvBASlJRoIyPsd3zeA=", hookURL, `{"say": "hello"}`,
			hdr("X-Zendesk-Webhook-Signature-Timestamp", "2021-07-25T10:00:00Z", "X-Zendesk-Webhook-Signature", "tRDSF7URY8BLCDlaBcQ7FHu051Zk+aAB0NKMP53teMw="), time.Now()},
		// docs.svix.com: verifying payloads manually
		{"svix", "svix", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", hookURL, `{"test": 2432232314}`,
			hdr("svix-id", "msg_p5jXN8AQM9LWM0D4loKWxJek", "svix-timestamp", "1614265330", "svix-signature", "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="), time.Unix(1614265330, 0)},
	} {
		t.Run(c.name, func(t *testing.T) {
			v, err := webhook.New(c.provider, c.secret, webhook.Options{})
			if err != nil {
				t.Fatal(err)
			}
			r := &webhook.Request{Method: "POST", URL: c.url, Header: c.header, Body: []byte(c.body), Now: c.now}
			if err := v.Verify(t.Context(), r); err != nil {
				t.Fatalf("the published example: %v", err)
			}
			r.Body = []byte(c.body + "x")
			if err := v.Verify(t.Context(), r); !errors.Is(err, webhook.ErrInvalid) {
				t.Fatalf("the example with a changed body: %v", err)
			}
		})
	}
}

// TestPlivoV3: Plivo's V3 signature over the URL, its sorted query, the sorted form
// parameters of a POST and the nonce, as Plivo's SDKs compute it.
func TestPlivoV3(t *testing.T) {
	v, err := webhook.New("plivo", secret, webhook.Options{})
	if err != nil {
		t.Fatal(err)
	}
	form := []byte("To=15551234567&From=15557654321")
	sig := b64(mac(sha256.New, secret, "https://hooks.example.test/in?b=2&x=1.From15557654321To15551234567.4242"))
	r := &webhook.Request{Method: "POST", URL: "https://hooks.example.test/in?x=1&b=2", Body: form, Now: time.Now(),
		Header: hdr("Content-Type", "application/x-www-form-urlencoded", "X-Plivo-Signature-V3-Nonce", "4242", "X-Plivo-Signature-V3", "bm90IGl0,"+sig)}
	if err := v.Verify(t.Context(), r); err != nil {
		t.Fatalf("a POST signed with V3: %v", err)
	}
	r.Body = []byte("To=15551234567&From=15550000000")
	if err := v.Verify(t.Context(), r); !errors.Is(err, webhook.ErrInvalid) {
		t.Fatalf("a changed parameter: %v", err)
	}
	get := &webhook.Request{Method: "GET", URL: "https://hooks.example.test/in?x=1&b=2", Now: time.Now(),
		Header: hdr("X-Plivo-Signature-V3-Nonce", "4242", "X-Plivo-Signature-Ma-V3", b64(mac(sha256.New, secret, "https://hooks.example.test/in?b=2&x=1.4242")))}
	if err := v.Verify(t.Context(), get); err != nil {
		t.Fatalf("a GET signed with V3: %v", err)
	}
}

// TestCheckSecret: a SendGrid verification key that is not a public key, or a VMware
// secret without "::", cannot verify anything.
func TestCheckSecret(t *testing.T) {
	for provider, bad := range map[string]string{"sendgrid": "not a key", "vmware": "password-only", "microsoft_teams": "not base64!"} {
		if err := webhook.CheckSecret(provider, bad); err == nil {
			t.Errorf("%s accepts the secret %q", provider, bad)
		}
	}
	if err := webhook.CheckSecret("sendgrid", secretOf("sendgrid")); err != nil {
		t.Fatal(err)
	}
	if err := webhook.CheckSecret("orbit", "x"); err != nil {
		t.Fatalf("an unsupported provider's secret: %v", err)
	}
}
