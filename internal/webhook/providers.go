package webhook

import (
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"hash"
	"time"
)

// provider is how one provider signs: the schemes a request may satisfy (any one), or
// none known (its requests are refused).
type provider struct{ schemes []scheme }

// providers are the module's providers (rules.WebhookProviders) and how each signs, from
// each provider's own documentation. Tolerances are the providers' documented ones; a
// provider that documents none has its timestamp signed but not aged.
var providers = map[string]provider{
	// AfterShip's products use different headers, am-webhook-signature with or without a prefix.
	"aftership": of(bodyHMAC("aftership-hmac-sha256", "", sha256.New, b64Enc), bodyHMAC("as-signature-hmac-sha256", "", sha256.New, b64Enc),
		bodyHMAC("am-webhook-signature", "hmac-sha256=", sha256.New, b64Enc), bodyHMAC("am-webhook-signature", "", sha256.New, b64Enc)),
	"airship":   of(&hmacSig{header: "X-UA-Signature", tsHeader: "X-UA-Timestamp", msg: "{ts}:{body}", hash: sha256.New, enc: hexEnc}),
	"sns":       of(snsScheme{}),
	"autodesk":  of(bodyHMAC("x-adsk-signature", "sha1hash=", sha1.New, hexEnc)),
	"bitbucket": of(bodyHMAC("X-Hub-Signature", "sha256=", sha256.New, hexEnc)),
	"bolt":      of(bodyHMAC("X-Bolt-Hmac-Sha256", "", sha256.New, b64Enc)),
	"box":       of(boxSig("box-signature-primary"), boxSig("box-signature-secondary")),
	"brex":      of(svixSigs...),
	"buildkite": of(&hmacSig{header: "X-Buildkite-Signature", form: pairs, tsKey: "timestamp", sigKey: "signature", msg: "{ts}.{body}", hash: sha256.New, enc: hexEnc},
		token{header: "X-Buildkite-Token"}),
	"calendly":           of(stripeLike("Calendly-Webhook-Signature", "v1", 3*time.Minute)),
	"castle":             of(bodyHMAC("X-Castle-Signature", "", sha256.New, b64Enc)),
	"chargify":           of(bodyHMAC("X-Chargify-Webhook-Signature-Hmac-Sha-256", "", sha256.New, hexEnc)),
	"circleci":           of(&hmacSig{header: "circleci-signature", form: pairs, sigKey: "v1", msg: "{body}", hash: sha256.New, enc: hexEnc}),
	"clearbit":           of(bodyHMAC("X-Request-Signature", "sha1=", sha1.New, hexEnc)),
	"clerk":              of(svixSigs...),
	"coinbase":           of(bodyHMAC("X-CC-Webhook-Signature", "", sha256.New, hexEnc)),
	"contentful":         of(contentful{maxAge: 30 * time.Second}),
	"docusign":           of(bodyHMAC("X-DocuSign-Signature-1", "", sha256.New, b64Enc), bodyHMAC("X-DocuSign-Signature-2", "", sha256.New, b64Enc)),
	"dropbox":            of(bodyHMAC("X-Dropbox-Signature", "", sha256.New, hexEnc)),
	"facebook_graph_api": of(hubSigs...),
	"facebook_messenger": of(hubSigs...),
	"frameio":            of(slackLike("X-Frameio-Signature", "X-Frameio-Request-Timestamp", 5*time.Minute)),
	"github":             of(hubSigs...),
	"gitlab":             of(token{header: "X-Gitlab-Token"}),
	"go1":                of(stripeLike("Go1-Signature", "v1", 0)),
	"heroku":             of(bodyHMAC("Heroku-Webhook-Hmac-SHA256", "", sha256.New, b64Enc)),
	"hostedhooks":        of(stripeLike("HostedHooks-Signature", "s", 0)),
	"hubspot": of(&hmacSig{header: "X-HubSpot-Signature-v3", tsHeader: "X-HubSpot-Request-Timestamp", ts: unixMillis, maxAge: 5 * time.Minute,
		msg: "{method}{url}{body}{ts}", hash: sha256.New, enc: b64Enc}),
	"graphcms":        of(hygraph{}),
	"instagram":       of(hubSigs...),
	"intercom":        of(bodyHMAC("X-Hub-Signature", "sha1=", sha1.New, hexEnc)),
	"launch_darkly":   of(bodyHMAC("X-LD-Signature", "", sha256.New, hexEnc)),
	"mailchimp":       of(urlParams{header: "X-Mandrill-Signature"}),
	"mailgun":         of(mailgunBody{}),
	"microsoft_teams": of(&hmacSig{header: "Authorization", prefix: "HMAC ", msg: "{body}", hash: sha256.New, enc: b64Enc, key: base64Key}),
	"modern_treasury": of(bodyHMAC("X-Signature", "", sha256.New, hexEnc)),
	"mongodb":         of(bodyHMAC("X-MMS-Signature", "", sha1.New, b64Enc), bodyHMAC("Endpoint-Signature", "sha256=", sha256.New, hexEnc)),
	"mux":             of(stripeLike("Mux-Signature", "v1", 5*time.Minute)),
	"orbit":           {}, // Orbit's signing scheme is not published any more (the service closed)
	"pagerduty":       of(&hmacSig{header: "X-PagerDuty-Signature", form: pairs, sigKey: "v1", msg: "{body}", hash: sha256.New, enc: hexEnc}),
	"pinwheel":        of(&hmacSig{header: "X-Pinwheel-Signature", prefix: "v2=", tsHeader: "X-Timestamp", msg: "v2:{ts}:{body}", hash: sha256.New, enc: hexEnc}),
	"plivo": of(plivoV3{header: "X-Plivo-Signature-V3"}, plivoV3{header: "X-Plivo-Signature-Ma-V3"},
		plivoSig("X-Plivo-Signature-V2"), plivoSig("X-Plivo-Signature-Ma-V2")),
	"pusher":          of(bodyHMAC("X-Pusher-Signature", "", sha256.New, hexEnc)),
	"sendgrid":        of(ecdsaSig{header: "X-Twilio-Email-Event-Webhook-Signature", tsHeader: "X-Twilio-Email-Event-Webhook-Timestamp"}),
	"sentry":          of(bodyHMAC("Sentry-Hook-Signature", "", sha256.New, hexEnc)),
	"shopify":         of(bodyHMAC("X-Shopify-Hmac-Sha256", "", sha256.New, b64Enc)),
	"signal_sciences": of(bodyHMAC("X-SigSci-Signature", "", sha256.New, hexEnc)),
	"slack":           of(slackLike("X-Slack-Signature", "X-Slack-Request-Timestamp", 5*time.Minute)),
	"sonatype":        of(bodyHMAC("X-Nexus-Webhook-Signature", "", sha1.New, hexEnc)),
	"square": of(&hmacSig{header: "X-Square-Hmacsha256-Signature", msg: "{url}{body}", hash: sha256.New, enc: b64Enc},
		&hmacSig{header: "X-Square-Signature", msg: "{url}{body}", hash: sha1.New, enc: b64Enc}),
	"stripe":                of(stripeLike("Stripe-Signature", "v1", 5*time.Minute)),
	"svix":                  of(svixSigs...),
	"terraform":             of(bodyHMAC("X-TFE-Notification-Signature", "", sha512.New, hexEnc)),
	"tiktok":                of(stripeLike("TikTok-Signature", "s", 0)),
	"trendmicro_conformity": of(bodyHMAC("X-Conformity-Signature", "", sha256.New, hexEnc)),
	"twilio":                of(urlParams{header: "X-Twilio-Signature"}),
	"twitter":               of(bodyHMAC("X-Twitter-Webhooks-Signature", "sha256=", sha256.New, b64Enc)),
	"typeform":              of(bodyHMAC("Typeform-Signature", "sha256=", sha256.New, b64Enc)),
	"vmware":                of(basicAuth{}),
	"webex":                 of(bodyHMAC("X-Spark-Signature", "", sha1.New, hexEnc)),
	"whatsapp":              of(hubSigs...),
	"worldline":             of(bodyHMAC("X-GCS-Signature", "", sha256.New, b64Enc)),
	"xero":                  of(bodyHMAC("X-Xero-Signature", "", sha256.New, b64Enc)),
	"zendesk":               of(zendeskSig("{ts}{body}"), zendeskSig("{body}{ts}")),
	"zoom":                  of(slackLike("X-Zm-Signature", "X-Zm-Request-Timestamp", 0)),
}

func of(schemes ...scheme) provider { return provider{schemes: schemes} }

// bodyHMAC signs the body alone, the signature after prefix in header.
func bodyHMAC(header, prefix string, h func() hash.Hash, enc encoding) *hmacSig {
	return &hmacSig{header: header, prefix: prefix, msg: "{body}", hash: h, enc: enc}
}

// stripeLike is "t=<unix seconds>,<sigKey>=<hex>" over "<t>.<body>" with SHA-256.
func stripeLike(header, sigKey string, maxAge time.Duration) *hmacSig {
	return &hmacSig{header: header, form: pairs, tsKey: "t", sigKey: sigKey, maxAge: maxAge, msg: "{ts}.{body}", hash: sha256.New, enc: hexEnc}
}

// slackLike is "v0=<hex>" over "v0:<timestamp>:<body>" with SHA-256, the timestamp in its
// own header.
func slackLike(header, tsHeader string, maxAge time.Duration) *hmacSig {
	return &hmacSig{header: header, prefix: "v0=", tsHeader: tsHeader, maxAge: maxAge, msg: "v0:{ts}:{body}", hash: sha256.New, enc: hexEnc}
}

// hubSigs are GitHub's and Meta's: X-Hub-Signature-256 (SHA-256), or the older
// X-Hub-Signature (SHA-1), over the body.
var hubSigs = []scheme{bodyHMAC("X-Hub-Signature-256", "sha256=", sha256.New, hexEnc), bodyHMAC("X-Hub-Signature", "sha1=", sha1.New, hexEnc)}

// svixSigs are Svix's (Clerk and Brex send through it): "v1,<base64>" over
// "<id>.<timestamp>.<body>", keyed with the whsec_ secret's bytes, in svix-* headers or
// their unbranded webhook-* spelling; 5 minutes.
var svixSigs = []scheme{svixSig("svix"), svixSig("webhook")}

func svixSig(prefix string) *hmacSig {
	return &hmacSig{header: prefix + "-signature", form: svixList, tsHeader: prefix + "-timestamp", maxAge: 5 * time.Minute,
		msg: "{h:" + prefix + "-id}.{ts}.{body}", hash: sha256.New, enc: b64Enc, key: svixKey}
}

// boxSig is Box's: base64 HMAC-SHA256 of the body then box-delivery-timestamp (RFC 3339),
// at most 10 minutes old; Box signs with its primary and secondary keys, either may match.
func boxSig(header string) *hmacSig {
	return &hmacSig{header: header, tsHeader: "box-delivery-timestamp", ts: rfc3339, maxAge: 10 * time.Minute,
		msg: "{body}{ts}", hash: sha256.New, enc: b64Enc}
}

// zendeskSig is Zendesk's: base64 HMAC-SHA256 of the RFC 3339 timestamp and the body. Its
// documentation says timestamp then body, and its published example signs body then
// timestamp: either passes.
func zendeskSig(msg string) *hmacSig {
	return &hmacSig{header: "X-Zendesk-Webhook-Signature", tsHeader: "X-Zendesk-Webhook-Signature-Timestamp", ts: rfc3339,
		msg: msg, hash: sha256.New, enc: b64Enc}
}

// plivoSig is Plivo's V2: base64 HMAC-SHA256 of the URL without its query, then the nonce.
func plivoSig(header string) *hmacSig {
	return &hmacSig{header: header, msg: "{baseurl}{h:X-Plivo-Signature-V2-Nonce}", hash: sha256.New, enc: b64Enc}
}
