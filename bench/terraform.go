package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/client"
)

// The terraform section runs terraform itself (found on PATH, never downloaded) against a
// Warren server of this process with the server's default settings, the rate limit included:
// the provider this repository builds, terraform_data (terraform's own floor: no plugin, no
// API) and the peer, a minimal SDKv2 provider of the shape of ngrok's own (bench/peer).
// Providers are found through dev_overrides, so no run needs terraform init or a registry.

const tfParallelism = 10

// tfTimes are the medians of a workload's runs, and the TCP connections the server accepted
// during each command (the median too).
type tfTimes struct {
	apply, plan, destroy time.Duration
	conns                [3]int64 // apply, plan, destroy
}

// tfWorkload is one configuration of n resources through one provider.
type tfWorkload struct {
	name   string
	config func(n int) string // main.tf
	env    []string           // more environment for terraform and its providers
}

var (
	tfData = tfWorkload{name: "terraform_data", config: func(n int) string {
		return fmt.Sprintf("resource \"terraform_data\" \"r\" {\n  count = %d\n  input = \"bench-${count.index}\"\n}\n", n)
	}}
	// tfMixed is groups of six Warren resources, four of them referring to another one: an IP
	// policy with two rules, a service user with an API key it owns, a reserved domain.
	tfMixed = tfWorkload{name: "Warren, mixed", config: func(n int) string {
		g := n / 6
		return warrenProviderBlock + fmt.Sprintf(`
resource "warren_ip_policy" "p" {
  count       = %[1]d
  description = "bench ${count.index}"
}

resource "warren_ip_policy_rule" "allow" {
  count        = %[1]d
  ip_policy_id = warren_ip_policy.p[count.index].id
  cidr         = "10.${count.index}.0.0/16"
  action       = "allow"
}

resource "warren_ip_policy_rule" "deny" {
  count        = %[1]d
  ip_policy_id = warren_ip_policy.p[count.index].id
  cidr         = "10.${count.index}.1.0/24"
  action       = "deny"
}

resource "warren_service_user" "u" {
  count = %[1]d
  name  = "bench-${count.index}"
}

resource "warren_api_key" "k" {
  count       = %[1]d
  description = "bench ${count.index}"
  owner_id    = warren_service_user.u[count.index].id
}

resource "warren_reserved_domain" "d" {
  count  = %[1]d
  domain = "d${count.index}.bench.example.com"
}
`, g)
	}}
	tfWarrenIPPolicies = tfWorkload{name: "Warren, IP policies", config: func(n int) string {
		return warrenProviderBlock + ipPolicies("warren_ip_policy", n)
	}}
	// tfWarrenTraced is the same with the SDK's trace logging on, as every run had it before
	// the provider turned it off when terraform does not log (main.go, quietUnlessLogging).
	tfWarrenTraced   = tfWorkload{name: "Warren, IP policies, SDK trace logging on", config: tfWarrenIPPolicies.config, env: []string{"TF_LOG_SDK=TRACE"}}
	tfPeerIPPolicies = tfWorkload{name: "peer (SDKv2, ngrok's shape), IP policies", config: func(n int) string {
		return `terraform {
  required_providers {
    ngrok = { source = "ngrok/ngrok" }
  }
}
` + ipPolicies("ngrok_ip_policy", n)
	}}
)

// The providers read the server's URL and key from the environment (tfEnv).
const warrenProviderBlock = `terraform {
  required_providers {
    warren = { source = "warrenhq/warren" }
  }
}
`

func ipPolicies(typ string, n int) string {
	return fmt.Sprintf("\nresource %q \"p\" {\n  count       = %d\n  description = \"bench ${count.index}\"\n}\n", typ, n)
}

var terraformSection = section{
	name:  "terraform",
	title: "Terraform: apply, no-change plan and destroy against terraform_data and the peer provider",
	run:   runTerraform,
}

func runTerraform(ctx context.Context, e *env) (*result, error) {
	if _, err := exec.LookPath("terraform"); err != nil {
		return nil, errors.New("terraform is not on PATH (the acceptance tests need it too)")
	}
	// Quick: one group of the mixed workload, one run.
	n, runs := size(e, 300, 6), size(e, 3, 1)
	tf, err := e.terraformSetup(ctx)
	if err != nil {
		return nil, err
	}
	workloads := []tfWorkload{tfData, tfMixed, tfWarrenIPPolicies, tfPeerIPPolicies, tfWarrenTraced}
	times := make([]tfTimes, len(workloads))
	for i, w := range workloads {
		e.logf("terraform: %s, %d resources, %d run(s)", w.name, n, runs)
		if times[i], err = tf.measure(ctx, w, n, runs); err != nil {
			return nil, err
		}
	}
	floor, mixed, warrenIP, peerIP, traced := times[0], times[1], times[2], times[3], times[4]
	keyed, plain, err := e.keyedPosts(ctx, n)
	if err != nil {
		return nil, err
	}

	row := func(name string, t tfTimes, conns bool) []string {
		c := "—"
		if conns {
			c = fmt.Sprintf("%d / %d / %d", t.conns[0], t.conns[1], t.conns[2])
		}
		return []string{name, secs(t.apply), secs(t.plan), secs(t.destroy), c}
	}
	ratios := func(name string, t, floor tfTimes) []string {
		return []string{name, ratio(t.apply.Seconds(), floor.apply.Seconds()), ratio(t.plan.Seconds(), floor.plan.Seconds()), ratio(t.destroy.Seconds(), floor.destroy.Seconds())}
	}
	header := []string{"workload", "apply", "no-change plan", "destroy"}
	res := &result{
		Intro: fmt.Sprintf("`terraform apply -auto-approve`, `terraform plan -detailed-exitcode` (no change) and `terraform destroy -auto-approve` of %d resources, `-parallelism=%d`, median of %d run(s), each in a fresh directory (terraform found on PATH; providers through `dev_overrides`, no `terraform init`). Warren runs in the bench process on SQLite with its default settings, rate limit included; a fresh server per workload. The floor is %d `terraform_data` resources (built into terraform: no plugin, no API). The mixed workload is groups of six: an IP policy, two IP policy rules referring to it, a service user, an API key it owns, a reserved domain. The peer is a minimal SDKv2 provider of the shape of ngrok's own terraform-provider-ngrok at commit 956bb08 (`bench/peer`, its own module: the module proxy does not serve that commit, and it speaks `Ngrok-Version` where Warren wants `Service-Version`): `http.DefaultClient`, a create is a POST then a GET, as ngrok's generated resources do.", n, tfParallelism, runs, n),
		Tables: []table{
			{Caption: "Times (median), and the TCP connections the server accepted during each command.", Header: append(slices.Clone(header), "connections (apply / plan / destroy)"), Rows: [][]string{
				row(fmt.Sprintf("%d terraform_data", n), floor, false),
				row(fmt.Sprintf("%d Warren, mixed", n), mixed, true),
				row(fmt.Sprintf("%d warren_ip_policy", n), warrenIP, true),
				row(fmt.Sprintf("%d peer ngrok_ip_policy", n), peerIP, true),
				row(fmt.Sprintf("%d warren_ip_policy, SDK trace logging on (as before)", n), traced, true),
			}},
			{Caption: "Against terraform_data (targets: apply ≤ 1.8×, no-change plan ≤ 3×).", Header: header, Rows: [][]string{
				ratios("Warren, mixed", mixed, floor),
				ratios("warren_ip_policy", warrenIP, floor),
				ratios("peer ngrok_ip_policy", peerIP, floor),
			}},
			{Caption: "Warren against the peer on the same IP policies (target: ≤ 1×).", Header: header, Rows: [][]string{
				ratios("warren_ip_policy / peer", warrenIP, peerIP),
			}},
			{Caption: fmt.Sprintf("What a create costs the server: %d `POST /ip_policies`, %d at once, with an `Idempotency-Key` (as the provider sends every POST, so that a create whose connection broke can be retried) and without (as the peer).", n, tfParallelism),
				Header: []string{"POSTs", "time", "ratio"}, Rows: [][]string{
					{"with Idempotency-Key", secs(keyed), ratio(keyed.Seconds(), plain.Seconds())},
					{"without", secs(plain), "1.00×"},
				}},
		},
	}
	res.Findings = tfFindings(floor, mixed, warrenIP, peerIP, traced, n, keyed, plain)
	return res, nil
}

// tfFindings says what the numbers of this run show against the targets, and what was changed.
func tfFindings(floor, mixed, warrenIP, peerIP, traced tfTimes, n int, keyed, plain time.Duration) []string {
	meets := func(x, target float64) string {
		if x <= target {
			return fmt.Sprintf("%.2f× (target ≤ %.1f×: met)", x, target)
		}
		return fmt.Sprintf("%.2f× (target ≤ %.1f×: missed)", x, target)
	}
	versus := func(w, p time.Duration) string {
		if w <= p {
			return fmt.Sprintf("%s against %s: as fast or faster", secs(w), secs(p))
		}
		return fmt.Sprintf("%s against %s: %.0f%% slower", secs(w), secs(p), 100*(w.Seconds()/p.Seconds()-1))
	}
	return []string{
		fmt.Sprintf("Mixed workload against terraform_data: apply %s, no-change plan %s, destroy %.2f×.",
			meets(mixed.apply.Seconds()/floor.apply.Seconds(), 1.8), meets(mixed.plan.Seconds()/floor.plan.Seconds(), 3), mixed.destroy.Seconds()/floor.destroy.Seconds()),
		fmt.Sprintf("Against the peer on %d IP policies: apply %s; no-change plan %s; destroy %s.",
			n, versus(warrenIP.apply, peerIP.apply), versus(warrenIP.plan, peerIP.plan), versus(warrenIP.destroy, peerIP.destroy)),
		fmt.Sprintf("Fixed: the SDK (terraform-plugin-go and the framework) logs every RPC at trace level as JSON on the provider's stderr unless told otherwise, and terraform parses each line only to throw it away when TF_LOG is unset: in a CPU profile of the provider during a no-change plan of 300 resources, the JSON encoding and writing were 22%% of its time, and terraform's CPU time (itself and the provider) for the plan fell from 2.8 s to 1.9 s once gone. The provider now turns the SDK's and its own logging off when no TF_LOG… variable is set (main.go). Its own root logger (tflog) reads TF_LOG_PROVIDER_WARREN, not TF_LOG_PROVIDER, and logs at trace level without it, so each API call's two debug lines were still written as JSON until that variable was set too: 3.5%% of the provider's CPU in apply, plan and destroy of 300 IP policies. With the logging on, as before: apply %s, plan %s, destroy %s, against %s, %s, %s now.",
			secs(traced.apply), secs(traced.plan), secs(traced.destroy), secs(warrenIP.apply), secs(warrenIP.plan), secs(warrenIP.destroy)),
		fmt.Sprintf("Fixed: resty's own transport keeps GOMAXPROCS+1 idle connections per host (3 on two cores) where terraform runs 10 operations at once, so most API calls opened a new connection (a TLS handshake against a real server) and left one in TIME_WAIT; the client now keeps %d (internal/client). A no-change plan of %d IP policies opens %d connections (the peer, on http.DefaultClient's 2 idle connections per host: %d).",
			client.MaxIdleConnsPerHost, n, warrenIP.conns[1], peerIP.conns[1]),
		"Fixed: a create or an update read the configuration into a model beside the plan, through the framework's reflection (which compiles a regular expression per field), though only resources with write-only values or modules use it; now only those read it (provider/resource_common.go). Measured together with the logging fix, the provider before (994997c) against after against the peer, interleaved on one server, two rounds of 3 runs on the shared machine (medians; CPU seconds of the provider processes, /usr/bin/time around each start): apply 1.96 → 1.87 (peer 1.69) and 1.75 → 1.67 (1.55); no-change plan 1.16 → 1.03 (1.02) and 0.91 → 0.89 (0.82); destroy 2.50 → 2.30 (2.02) and 1.92 → 1.96 (1.80). Terraform and the provider together, second round: apply 4.19 → 3.93 s (peer 4.08), plan 1.79 → 1.73 (1.84), destroy 4.95 → 5.08 (5.21). So the provider process still costs 5 to 10% more CPU than the peer's (the framework's per-RPC cost, below), and terraform with it about the same as with the peer.",
		"Where the provider's CPU goes now (pprof, WARREN_PROVIDER_CPUPROFILE=<prefix> writes one profile per provider start; apply, plan and destroy of 300 IP policies, 12 starts, 3.3 s of samples): the framework 34% (decoding and encoding each RPC's values through the schema, plan modifiers and validators with a logger context each), gRPC transport 16%, the SDK's logger set-up per RPC 6% (paid with the logging off; the peer's SDKv2 pays it too), garbage collection 10%, runtime and protobuf 21%; the provider's own code 12%, of which 7 points are the framework's reflection into and out of the resource models (Get and Set), 4 the HTTP client and JSON, under 1 its own logic. Starting the provider (go-plugin's TLS certificate) is 1%, GetProviderSchema 1%, ConfigureProvider under 1%. So what is left over the peer is the framework's per-RPC cost against SDKv2's, not work the provider adds. With a handful of resources the starts dominate instead (four or five per command): a start costs about 0.1 s of CPU, the peer's about 0.09 s, most of it go-plugin's TLS key for both; the provider's package initialisation takes about 25 ms against the peer's 17 ms (CEL and SAML parsing for the plan-time checks of internal/rules), and the first start of a command answers GetProviderSchema in 10 to 30 ms (24 resources, 50 data sources).",
		"The mixed workload, per type (counted from the provider's debug log): every resource is one API call per create, read and delete, none reads back or calls twice. The costliest per resource are the reserved domain for the provider (22 attributes with nested ones: a no-change plan of 120 costs 1.25 s of provider CPU against 0.67 s for 120 IP policies) and, for the server, the creates of API keys and reserved domains (median 91 and 94 ms against 50 ms for an IP policy, on a loaded machine).",
		"Already minimal, checked: one API call per create, read, update and delete (the POST and PATCH answers carry the whole object, so nothing is read back; the peer reads back after every write), one client per provider process (Configure runs once per process; resources only take it from ProviderData), schemas built by the framework once per process and fetched by terraform once per command (GetProviderSchemaOptional). Starting the provider (terraform starts it four times per apply) costs about the same CPU as the peer's start.",
		fmt.Sprintf("The Idempotency-Key on every create the provider sends (a POST whose connection broke is retried and runs once): the server looks the key up and records it with its answer in the create's own write transaction, so a keyed create is one write transaction like a plain one, and the create and its replayable answer commit together or not at all. %d keyed POSTs took %s against %s without a key (%.2f×): what remains is the record's own row (the key's lookup and its insert beside the object's), which the peer, sending no key, does not pay; dropping the key would give up the safe retry of creates.", n, secs(keyed), secs(plain), keyed.Seconds()/plain.Seconds()),
		"What stands in the way where a ratio is missed: the rest is the framework's own per-resource cost (four RPCs per resource in a plan: ValidateResourceConfig, UpgradeResourceState, ReadResource, PlanResourceChange, each decoding and encoding msgpack through the schema) and terraform's, plus the API server, which runs in the bench process on the same cores. The times are of a shared two-core machine: compare ratios of one run.",
	}
}

// keyedPosts times n creates of IP policies, tfParallelism at once, against a new server with
// default settings: with an Idempotency-Key on each, then without.
func (e *env) keyedPosts(ctx context.Context, n int) (keyed, plain time.Duration, err error) {
	db, err := e.openStore(ctx, onSQLite)
	if err != nil {
		return 0, 0, err
	}
	srv, err := e.startWarren(ctx, db)
	if err != nil {
		_ = db.Close()
		return 0, 0, err
	}
	defer srv.Close()
	hc := newHTTPClient(tfParallelism)
	posts := func(withKey bool) (time.Duration, error) {
		jobs := make(chan int, n)
		for i := range n {
			jobs <- i
		}
		close(jobs)
		errs := make(chan error, tfParallelism)
		start := time.Now()
		for range tfParallelism {
			go func() {
				for range jobs {
					req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/ip_policies", strings.NewReader(`{"description":"bench"}`))
					if err != nil {
						errs <- err
						return
					}
					req.Header.Set("Authorization", "Bearer "+srv.Token)
					req.Header.Set(api.VersionHeader, api.Version)
					req.Header.Set("Content-Type", "application/json")
					if withKey {
						req.Header.Set(api.IdempotencyKeyHeader, rand.Text())
					}
					resp, err := hc.Do(req)
					if err != nil {
						errs <- err
						return
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != http.StatusCreated {
						errs <- fmt.Errorf("POST /ip_policies: %d", resp.StatusCode)
						return
					}
				}
				errs <- nil
			}()
		}
		for range tfParallelism {
			if err := <-errs; err != nil {
				return 0, err
			}
		}
		return time.Since(start), nil
	}
	// Alternated, so that neither always runs on the emptier database.
	var ks, ps []time.Duration
	for range size(e, 3, 1) {
		k, err := posts(true)
		if err != nil {
			return 0, 0, err
		}
		p, err := posts(false)
		if err != nil {
			return 0, 0, err
		}
		ks, ps = append(ks, k), append(ps, p)
	}
	return median(ks), median(ps), nil
}

// tfSetup is what every terraform run shares: the providers built into a directory and a
// CLI configuration that points terraform at them.
type tfSetup struct {
	e         *env
	cliConfig string
}

// terraformSetup builds the provider of this repository and the peer (its own module) and
// writes the CLI configuration with their dev_overrides.
func (e *env) terraformSetup(ctx context.Context) (*tfSetup, error) {
	gomod, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return nil, fmt.Errorf("go env GOMOD: %w", err)
	}
	root := filepath.Dir(strings.TrimSpace(string(gomod)))
	bin := filepath.Join(e.dir, "providers")
	for dir, name := range map[string]string{root: "terraform-provider-warren", filepath.Join(root, "bench", "peer"): "terraform-provider-ngrok"} {
		cmd := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(bin, name), ".")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("building %s: %w\n%s", name, err, out)
		}
	}
	cliConfig := filepath.Join(e.dir, "terraformrc")
	conf := fmt.Sprintf("provider_installation {\n  dev_overrides {\n    \"warrenhq/warren\" = %q\n    \"ngrok/ngrok\" = %q\n  }\n  direct {}\n}\n", bin, bin)
	if err := os.WriteFile(cliConfig, []byte(conf), 0o644); err != nil {
		return nil, err
	}
	return &tfSetup{e: e, cliConfig: cliConfig}, nil
}

// measure runs apply, a no-change plan and destroy of the workload runs times, against a new
// Warren server with default settings, and returns the medians.
func (s *tfSetup) measure(ctx context.Context, w tfWorkload, n, runs int) (tfTimes, error) {
	db, err := s.e.openStore(ctx, onSQLite)
	if err != nil {
		return tfTimes{}, err
	}
	srv, err := s.e.startWarren(ctx, db)
	if err != nil {
		_ = db.Close()
		return tfTimes{}, err
	}
	defer srv.Close()
	env := append(os.Environ(),
		"TF_CLI_CONFIG_FILE="+s.cliConfig, "TF_IN_AUTOMATION=1", "TF_INPUT=0", "CHECKPOINT_DISABLE=1", "TF_LOG=",
		"WARREN_API_URL="+srv.URL, "WARREN_API_KEY="+srv.Token,
		"NGROK_API_BASE_URL="+srv.URL, "NGROK_API_KEY="+srv.Token,
	)
	env = append(env, w.env...)
	var (
		apply, plan, destroy []time.Duration
		conns                [3][]int64
	)
	for range runs {
		dir, err := os.MkdirTemp(s.e.dir, "tf-")
		if err != nil {
			return tfTimes{}, err
		}
		if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(w.config(n)), 0o644); err != nil {
			return tfTimes{}, err
		}
		tf := func(phase int, args ...string) (time.Duration, error) {
			cmd := exec.CommandContext(ctx, "terraform", append(args, "-no-color", "-input=false")...)
			cmd.Dir, cmd.Env = dir, env
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			start, opened := time.Now(), srv.Conns.Load()
			err := cmd.Run()
			took := time.Since(start)
			conns[phase] = append(conns[phase], srv.Conns.Load()-opened)
			if err != nil {
				// plan -detailed-exitcode exits 2 when it has changes: after apply there must be none.
				return 0, fmt.Errorf("%s: terraform %s: %w\n%s", w.name, strings.Join(args, " "), err, tail(out.String(), 3000))
			}
			return took, nil
		}
		par := fmt.Sprintf("-parallelism=%d", tfParallelism)
		a, err := tf(0, "apply", "-auto-approve", par)
		if err != nil {
			return tfTimes{}, err
		}
		p, err := tf(1, "plan", "-detailed-exitcode", par)
		if err != nil {
			return tfTimes{}, err
		}
		d, err := tf(2, "destroy", "-auto-approve", par)
		if err != nil {
			return tfTimes{}, err
		}
		apply, plan, destroy = append(apply, a), append(plan, p), append(destroy, d)
		_ = os.RemoveAll(dir)
	}
	return tfTimes{median(apply), median(plan), median(destroy), [3]int64{median(conns[0]), median(conns[1]), median(conns[2])}}, nil
}

func median[T int64 | time.Duration](values []T) T {
	s := slices.Clone(values)
	slices.Sort(s)
	return s[len(s)/2]
}

// tail is the end of a long output (where terraform says what went wrong).
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
