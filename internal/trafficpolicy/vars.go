package trafficpolicy

import (
	"crypto/tls"
	"net/http"
	"net/netip"
	"time"
)

// Conn is what every phase knows of the visitor's connection and of the edge it reached.
type Conn struct {
	Client, Server netip.AddrPort
	Start          time.Time
	// TLSVersion ("TLS 1.3") and SNI are "" on a TCP edge. On a TLS edge the policy runs
	// before the handshake: TLSVersion is then the highest version the ClientHello offers.
	TLSVersion, SNI string
	// EndpointID is the edge's ID; Host and Port what the visitor reached; Protocol "https",
	// "tls" or "tcp".
	EndpointID, Host, Protocol string
	Port                       int
}

// TLSVersionName is a TLS version as conn.tls.version holds it ("TLS 1.3"); "" for none.
func TLSVersionName(v uint16) string {
	if v == 0 {
		return ""
	}
	return tls.VersionName(v)
}

// activation is the CEL variables of a phase:
//
//	conn.client_ip, conn.client_port, conn.server_ip, conn.server_port, conn.ts.start,
//	conn.tls.version, conn.tls.sni
//	endpoint.id, endpoint.host, endpoint.port, endpoint.protocol
//	time.now
//	vars (empty: set-vars is not supported)
//	req.method, req.url.{raw, scheme, host, path, query, query_params}, req.host,
//	req.headers, req.query_params, req.cookies, req.content_length, req.proto, req.user_agent
//	res.status_code, res.headers, res.cookies, res.content_length
//
// Headers are maps of lower-case names to lists of values; query_params maps of names to
// lists; cookies maps of names to lists of {name, value, …}.
func (x *Exchange) activation() map[string]any {
	c := x.Conn
	a := map[string]any{
		"conn": map[string]any{
			"client_ip": c.Client.Addr().Unmap().String(), "client_port": int64(c.Client.Port()),
			"server_ip": addrString(c.Server), "server_port": int64(c.Server.Port()),
			"ts":  map[string]any{"start": c.Start},
			"tls": map[string]any{"version": c.TLSVersion, "sni": c.SNI},
		},
		"endpoint": map[string]any{"id": c.EndpointID, "host": c.Host, "port": int64(c.Port), "protocol": c.Protocol},
		"time":     map[string]any{"now": x.now()},
		"vars":     map[string]any{},
	}
	if r := x.Req; r != nil {
		a["req"] = requestVars(r, c.Protocol)
	}
	if res := x.Res; res != nil {
		a["res"] = responseVars(res)
	}
	return a
}

func addrString(ap netip.AddrPort) string {
	if !ap.IsValid() {
		return ""
	}
	return ap.Addr().Unmap().String()
}

func requestVars(r *http.Request, scheme string) map[string]any {
	u := *r.URL
	u.Scheme, u.Host = scheme, r.Host
	query := map[string][]string(r.URL.Query())
	cookies := map[string]any{}
	for _, ck := range r.Cookies() {
		list, _ := cookies[ck.Name].([]any)
		cookies[ck.Name] = append(list, map[string]any{"name": ck.Name, "value": ck.Value})
	}
	return map[string]any{
		"method": r.Method,
		"url": map[string]any{"raw": u.String(), "scheme": scheme, "host": hostOnly(r.Host), "path": r.URL.Path,
			"query": r.URL.RawQuery, "query_params": query},
		"host": hostOnly(r.Host), "headers": headerMap(r.Header), "query_params": query, "cookies": cookies,
		"content_length": r.ContentLength, "proto": r.Proto, "user_agent": r.UserAgent(),
	}
}

func responseVars(res *http.Response) map[string]any {
	cookies := map[string]any{}
	for _, ck := range res.Cookies() {
		list, _ := cookies[ck.Name].([]any)
		cookies[ck.Name] = append(list, map[string]any{"name": ck.Name, "value": ck.Value, "path": ck.Path,
			"domain": ck.Domain, "secure": ck.Secure, "http_only": ck.HttpOnly})
	}
	return map[string]any{"status_code": int64(res.StatusCode), "headers": headerMap(res.Header),
		"cookies": cookies, "content_length": res.ContentLength}
}

// hostOnly is a Host header without its port.
func hostOnly(hostport string) string {
	if ap, err := netip.ParseAddrPort(hostport); err == nil {
		return ap.Addr().String()
	}
	for i := len(hostport) - 1; i >= 0 && hostport[i] != ']'; i-- {
		if hostport[i] == ':' {
			return hostport[:i]
		}
	}
	return hostport
}
