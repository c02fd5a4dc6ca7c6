package main

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"maps"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/warrenhq/terraform-provider-warren/apiserver/apiservertest"
	"github.com/warrenhq/terraform-provider-warren/internal/agentclient"
	"github.com/warrenhq/terraform-provider-warren/internal/agentclient/agentpeer"
	"github.com/warrenhq/terraform-provider-warren/internal/agentproto"
)

const token = "2agentTokenFirstPart_3agentTokenSecretPart"

func envOf(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// TestCommandLine runs the command on command lines that must not dial: each gets its exit
// code and output.
func TestCommandLine(t *testing.T) {
	const usageStart = "warren-agent connects to a Warren server as an agent"
	base := []string{"--server", "http://127.0.0.1:1", "--authtoken", token, "--forwards-to", "http://localhost:8080"}
	with := func(extra ...string) []string { return append(append([]string{}, base...), extra...) }
	for _, tt := range []struct {
		args           []string
		env            map[string]string
		code           int
		stdout, stderr string // substrings; "" checks the stream is empty
	}{
		{args: []string{"bogus"}, code: 2, stderr: `unknown command "bogus"`},
		{args: with("--hostname", "a.example.com", "bogus"), code: 2, stderr: `unexpected argument "bogus"`},
		{args: []string{"version", "x"}, code: 2, stderr: "version takes no arguments"},
		{args: []string{"--nope"}, code: 2, stderr: "flag provided but not defined: -nope"},
		{args: []string{"version"}, stdout: "dev\n"},
		{args: []string{"--version"}, stdout: "dev\n"},
		{args: []string{"--version"}, env: map[string]string{"WARREN_AGENT_LABEL": "broken"}, stdout: "dev\n"},
		{args: []string{"help"}, stdout: usageStart},
		{args: []string{"-h"}, stdout: usageStart},
		{args: []string{"--authtoken", token, "--forwards-to", "x:1", "--hostname", "a"}, code: 2, stderr: "--server is required"},
		{args: []string{"--server", "http://h", "--forwards-to", "x:1", "--hostname", "a"}, code: 2, stderr: "--authtoken is required"},
		{args: []string{"--server", "http://h", "--authtoken", token, "--hostname", "a"}, code: 2, stderr: "--forwards-to is required"},
		{args: base, code: 2, stderr: "give --hostname, --addr or --label"},
		{args: with("--hostname", "a", "--addr", "b:1"), code: 2, stderr: "give --hostname or --addr, not both"},
		{args: with("--hostname", "a", "--proto", "udp"), code: 2, stderr: `--proto "udp" is not one of http, https, tcp, tls`},
		{args: with("--addr", "b:1", "--proto", "http"), code: 2, stderr: "--addr binds a tcp tunnel, not --proto http"},
		{args: with("--hostname", "a", "--proto", "tcp"), code: 2, stderr: "--proto tcp binds an --addr"},
		{args: with("--addr", "nope"), code: 2, stderr: `--addr "nope" is not host:port`},
		{args: with("--hostname", "a", "--server", "warren.example.com"), code: 2, stderr: `--server "warren.example.com" is not an http:// or https:// URL`},
		{args: with("--hostname", "a", "--forwards-to", "localhost"), code: 2, stderr: `tunnel 1: forwards_to "localhost" is not http://host:port, https://host:port, host:port or a port`},
		{args: with("--addr", "b:1", "--forwards-to", "http://localhost:22"), code: 2, stderr: "a tcp tunnel forwards its bytes as they are to host:port or a port, not to a URL"},
		{args: with("--hostname", "a", "--upstream-ca", "/nonexistent/ca.pem"), code: 2, stderr: "reading the upstream CA file"},
		{args: with("--hostname", "a", "--upstream-ca", "ca.pem", "--upstream-insecure-skip-verify"), code: 2, stderr: "give --upstream-ca or --upstream-insecure-skip-verify, not both"},
		{args: with("--hostname", "a"), env: map[string]string{"WARREN_AGENT_PROXY_PROTOCOL": "maybe"}, code: 2, stderr: `invalid value "maybe" for WARREN_AGENT_PROXY_PROTOCOL`},
		{args: with("--label", "novalue"), code: 2, stderr: `invalid value "novalue" for flag -label: "novalue" is not KEY=VALUE`},
		{args: with("--label", "a=b", "--label", "a=c"), code: 2, stderr: `label "a" given twice`},
		{args: with("--hostname", "a"), env: map[string]string{"WARREN_AGENT_LABEL": "x=1,y"}, code: 2, stderr: `invalid value "x=1,y" for WARREN_AGENT_LABEL`},
		{args: with("--hostname", "a", "--log-level", "loud"), code: 2, stderr: `--log-level "loud" is not one of`},
		{args: with("--hostname", "a", "--connections", "0"), code: 2, stderr: "--connections 0 is not between 1 and 16"},
		{args: with("--hostname", "a"), env: map[string]string{"WARREN_AGENT_CONNECTIONS": "17"}, code: 2, stderr: "--connections 17 is not between 1 and 16"},
		{args: with("--hostname", "a", "--inspect", ":4040"), code: 2, stderr: `--inspect ":4040" is not a loopback address`},
		{args: with("--hostname", "a", "--inspect", "192.0.2.1:4040"), code: 2, stderr: "add --inspect-allow-remote"},
	} {
		t.Run(strings.Join(tt.args, " ")+fmt.Sprint(tt.env), func(t *testing.T) {
			var stdout, stderr apiservertest.LockedBuffer
			code := run(t.Context(), tt.args, envOf(tt.env), &stdout, &stderr)
			if code != tt.code {
				t.Errorf("exit code %d, want %d; stderr: %s", code, tt.code, stderr.String())
			}
			for _, s := range []struct{ name, got, want string }{{"stdout", stdout.String(), tt.stdout}, {"stderr", stderr.String(), tt.stderr}} {
				if (s.want == "") != (s.got == "") || !strings.Contains(s.got, s.want) {
					t.Errorf("%s = %q, want it to contain %q", s.name, s.got, s.want)
				}
			}
			if strings.Contains(stdout.String()+stderr.String(), "SecretPart") {
				t.Error("the token reached the output")
			}
			wrongLine := strings.Contains(tt.stderr, "argument") || strings.Contains(tt.stderr, "command") || strings.Contains(tt.stderr, "not defined")
			if wrongLine && !strings.Contains(stderr.String(), usageStart) {
				t.Errorf("stderr lacks the usage: %s", stderr.String())
			}
		})
	}
}

// TestHelpHidesTheEnvironment: --help shows the built-in defaults, never a token from the
// environment.
func TestHelpHidesTheEnvironment(t *testing.T) {
	var stdout, stderr apiservertest.LockedBuffer
	if code := run(t.Context(), []string{"--help"}, envOf(map[string]string{"WARREN_AGENT_AUTHTOKEN": token}), &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, flag := range []string{"-server", "-authtoken", "-forwards-to", "-hostname", "-addr", "-label", "-proto", "-metadata", "-region", "-log-level", "-upstream-ca", "-upstream-insecure-skip-verify", "-proxy-protocol", "-inspect", "-inspect-allow-remote", "-inspect-show-secrets", "WARREN_AGENT_AUTHTOKEN"} {
		if !strings.Contains(stdout.String(), flag) {
			t.Errorf("the help lacks %s", flag)
		}
	}
	if strings.Contains(stdout.String(), "SecretPart") {
		t.Error("the help shows the token")
	}
}

// TestTunnelsFromFlagsAndEnvironment: the tunnels derived from flags and environment, the
// command line winning.
func TestTunnelsFromFlagsAndEnvironment(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
		env  map[string]string
		want []agentclient.TunnelConfig
	}{
		{"hostname", []string{"--hostname", "app.example.com"}, nil,
			[]agentclient.TunnelConfig{{Proto: "https", Hostname: "app.example.com", ForwardsTo: "http://localhost:8080"}}},
		{"addr", []string{"--addr", "1.tcp.warren.test:20001", "--forwards-to", "localhost:22"}, nil,
			[]agentclient.TunnelConfig{{Proto: "tcp", Addr: "1.tcp.warren.test:20001", ForwardsTo: "localhost:22"}}},
		{"labels and hostname", []string{"--hostname", "h.example.com", "--label", "app=shop", "--label", "env=prod", "--proto", "http"}, nil,
			[]agentclient.TunnelConfig{
				{Proto: "http", Hostname: "h.example.com", ForwardsTo: "http://localhost:8080"},
				{Proto: "http", Labels: map[string]string{"app": "shop", "env": "prod"}, ForwardsTo: "http://localhost:8080"},
			}},
		{"environment", nil, map[string]string{"WARREN_AGENT_LABEL": "app=shop, env=prod", "WARREN_AGENT_PROTO": "tls", "WARREN_AGENT_FORWARDS_TO": "localhost:8443"},
			[]agentclient.TunnelConfig{{Proto: "tls", Labels: map[string]string{"app": "shop", "env": "prod"}, ForwardsTo: "localhost:8443"}}},
		{"flags win", []string{"--hostname", "flag.example.com", "--forwards-to", "http://localhost:1"}, map[string]string{"WARREN_AGENT_HOSTNAME": "env.example.com", "WARREN_AGENT_FORWARDS_TO": "http://localhost:2"},
			[]agentclient.TunnelConfig{{Proto: "https", Hostname: "flag.example.com", ForwardsTo: "http://localhost:1"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{"WARREN_AGENT_SERVER": "https://warren.example.com", "WARREN_AGENT_AUTHTOKEN": token, "WARREN_AGENT_FORWARDS_TO": "http://localhost:8080", "WARREN_AGENT_REGION": "eu", "WARREN_AGENT_METADATA": "m"}
			for k, v := range tt.env {
				env[k] = v
			}
			var stderr apiservertest.LockedBuffer
			cfg, err := parseFlags(tt.args, envOf(env), &stderr)
			if err != nil {
				t.Fatalf("%v %s", err, stderr.String())
			}
			if got, want := fmt.Sprint(cfg.tunnels), fmt.Sprint(tt.want); got != want {
				t.Errorf("tunnels %s, want %s", got, want)
			}
			c := cfg.client(nil)
			if c.ServerURL != "https://warren.example.com" || c.Authtoken != token || c.Region != "eu" || c.Metadata != "m" || c.AgentVersion != version {
				t.Errorf("client config %+v", c)
			}
		})
	}
}

// TestRunUntilStop: the command connects, binds, logs JSON lines with ISO 8601 timestamps
// and no token, and exits 0 when the server stops it.
func TestRunUntilStop(t *testing.T) {
	p := agentpeer.New(t, token)
	var stdout, stderr apiservertest.LockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(t.Context(), []string{"--server", p.URL, "--hostname", "app.example.com", "--forwards-to", "http://localhost:8080", "--region", "eu"},
			envOf(map[string]string{"WARREN_AGENT_AUTHTOKEN": token}), &stdout, &stderr)
	}()
	pc := p.Accept(t)
	hello := pc.Welcome(t, "ts_cmd", 1)
	if hello.Region != "eu" || hello.AgentVersion != "dev" {
		t.Errorf("hello %+v", hello)
	}
	pc.Send(t, agentproto.Message{Type: agentproto.TypeCommand, ID: "c1", Command: agentproto.CommandStop})
	if res := pc.Read(t); res.Type != agentproto.TypeCommandResult || res.Error != "" {
		t.Errorf("stop answered %+v", res)
	}
	pc.Closed(t)
	if code := <-done; code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if stdout.String() != "" {
		t.Errorf("stdout %q", stdout.String())
	}
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	msgs := map[string]bool{}
	iso := regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+`)
	for _, l := range lines {
		var e map[string]any
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("not a JSON line: %q", l)
		}
		if !iso.MatchString(fmt.Sprint(e["ts"])) {
			t.Errorf("ts %v is not ISO 8601", e["ts"])
		}
		msgs[fmt.Sprint(e["msg"])] = true
	}
	for _, m := range []string{"starting", "connected", "tunnel bound", "command received", "stopped by the server"} {
		if !msgs[m] {
			t.Errorf("no %q line in %s", m, stderr.String())
		}
	}
	if strings.Contains(stderr.String(), "SecretPart") {
		t.Error("the token reached the logs")
	}
}

// TestRunRefused: a refused token exits 1 at once, saying why, without the token.
func TestRunRefused(t *testing.T) {
	p := agentpeer.New(t, token)
	var stdout, stderr apiservertest.LockedBuffer
	code := run(t.Context(), []string{"--server", p.URL, "--authtoken", "2wrong_" + token, "--label", "a=b", "--forwards-to", "localhost:1"}, envOf(nil), &stdout, &stderr)
	if code != 1 {
		t.Fatalf("exit %d, want 1: %s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "warren-agent: the server refused the agent (HTTP 403): ERR_203") {
		t.Errorf("stderr %s", stderr.String())
	}
	if strings.Contains(stderr.String(), "SecretPart") {
		t.Error("the token reached the output")
	}
	if p.Handshakes() != 1 {
		t.Errorf("%d handshakes, want 1", p.Handshakes())
	}
}

// TestRunSignal: the end of ctx (SIGINT, SIGTERM) closes the connection normally and exits 0.
func TestRunSignal(t *testing.T) {
	p := agentpeer.New(t, token)
	ctx, cancel := context.WithCancel(t.Context())
	var stdout, stderr apiservertest.LockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"--server", p.URL, "--authtoken", token, "--addr", "1.tcp.warren.test:20001", "--forwards-to", "localhost:22"}, envOf(nil), &stdout, &stderr)
	}()
	pc := p.Accept(t)
	if b := pc.Welcome(t, "ts_sig", 1); b.Type != agentproto.TypeHello {
		t.Fatal(b)
	}
	cancel()
	pc.Closed(t)
	if code := <-done; code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "stopping on a signal") {
		t.Errorf("stderr %s", stderr.String())
	}
}

// TestForwardOptionsFromFlagsAndEnvironment: the upstream flags and their variables reach
// the client's Forward options.
func TestForwardOptionsFromFlagsAndEnvironment(t *testing.T) {
	app := httptest.NewTLSServer(nil)
	app.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: app.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"WARREN_AGENT_SERVER": "https://warren.example.com", "WARREN_AGENT_AUTHTOKEN": token, "WARREN_AGENT_FORWARDS_TO": "https://localhost:8443", "WARREN_AGENT_HOSTNAME": "app.example.com"}
	for _, tt := range []struct {
		name string
		args []string
		env  map[string]string
		want agentclient.ForwardOptions
	}{
		{"none", nil, nil, agentclient.ForwardOptions{}},
		{"flags", []string{"--upstream-ca", ca, "--proxy-protocol"}, nil, agentclient.ForwardOptions{UpstreamCAFile: ca, ProxyProtocol: true}},
		{"environment", nil, map[string]string{"WARREN_AGENT_UPSTREAM_INSECURE_SKIP_VERIFY": "true", "WARREN_AGENT_PROXY_PROTOCOL": "1"},
			agentclient.ForwardOptions{UpstreamInsecureSkipVerify: true, ProxyProtocol: true}},
		{"flags win", []string{"--proxy-protocol=false"}, map[string]string{"WARREN_AGENT_PROXY_PROTOCOL": "true", "WARREN_AGENT_UPSTREAM_CA": ca},
			agentclient.ForwardOptions{UpstreamCAFile: ca}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			all := maps.Clone(env)
			maps.Copy(all, tt.env)
			var stderr apiservertest.LockedBuffer
			cfg, err := parseFlags(tt.args, envOf(all), &stderr)
			if err != nil {
				t.Fatalf("%v %s", err, stderr.String())
			}
			if got := cfg.client(nil).Forward; got != tt.want {
				t.Errorf("forward options %+v, want %+v", got, tt.want)
			}
		})
	}
}
