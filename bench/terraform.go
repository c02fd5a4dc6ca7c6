package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// The terraform section runs terraform itself (found on PATH, never downloaded) against a
// Warren server of this process with the server's default settings, the rate limit included:
// the provider this repository builds, terraform_data (terraform's own floor: no plugin, no
// API) and the peer, a minimal SDKv2 provider of the shape of ngrok's own (bench/peer).
// Providers are found through dev_overrides, so no run needs terraform init or a registry.

const tfParallelism = 10

// tfTimes are the medians of a workload's runs.
type tfTimes struct{ apply, plan, destroy time.Duration }

// tfWorkload is one configuration of n resources through one provider.
type tfWorkload struct {
	name   string
	config func(n int) string // main.tf
}

var (
	tfData = tfWorkload{"terraform_data", func(n int) string {
		return fmt.Sprintf("resource \"terraform_data\" \"r\" {\n  count = %d\n  input = \"bench-${count.index}\"\n}\n", n)
	}}
	// tfMixed is groups of six Warren resources, four of them referring to another one: an IP
	// policy with two rules, a service user with an API key it owns, a reserved domain.
	tfMixed = tfWorkload{"Warren, mixed", func(n int) string {
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
	tfWarrenIPPolicies = tfWorkload{"Warren, IP policies", func(n int) string {
		return warrenProviderBlock + ipPolicies("warren_ip_policy", n)
	}}
	tfPeerIPPolicies = tfWorkload{"peer (SDKv2, ngrok's shape), IP policies", func(n int) string {
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

func runTerraform(ctx context.Context, e *env) (*result, error) {
	if _, err := exec.LookPath("terraform"); err != nil {
		return nil, errors.New("terraform is not on PATH (the acceptance tests need it too)")
	}
	n, runs := size(e, 300, 12), size(e, 3, 1)
	tf, err := e.terraformSetup(ctx)
	if err != nil {
		return nil, err
	}
	measure := func(w tfWorkload) (tfTimes, error) {
		e.logf("terraform: %s, %d resources, %d run(s)", w.name, n, runs)
		return tf.measure(ctx, w, n, runs)
	}
	floor, err := measure(tfData)
	if err != nil {
		return nil, err
	}
	mixed, err := measure(tfMixed)
	if err != nil {
		return nil, err
	}
	warrenIP, err := measure(tfWarrenIPPolicies)
	if err != nil {
		return nil, err
	}
	peerIP, err := measure(tfPeerIPPolicies)
	if err != nil {
		return nil, err
	}

	row := func(name string, t tfTimes) []string {
		return []string{name, secs(t.apply), secs(t.plan), secs(t.destroy)}
	}
	ratios := func(name string, t, floor tfTimes) []string {
		return []string{name, ratio(t.apply.Seconds(), floor.apply.Seconds()), ratio(t.plan.Seconds(), floor.plan.Seconds()), ratio(t.destroy.Seconds(), floor.destroy.Seconds())}
	}
	header := []string{"workload", "apply", "no-change plan", "destroy"}
	res := &result{
		Intro: fmt.Sprintf("`terraform apply -auto-approve`, `terraform plan -detailed-exitcode` (no change) and `terraform destroy -auto-approve` of %d resources, `-parallelism=%d`, median of %d run(s), each in a fresh directory (terraform found on PATH; providers through `dev_overrides`, no `terraform init`). Warren runs in the bench process on SQLite with its default settings, rate limit included; a fresh server per workload. The floor is %d `terraform_data` resources (built into terraform: no plugin, no API). The mixed workload is groups of six: an IP policy, two IP policy rules referring to it, a service user, an API key it owns, a reserved domain. The peer is a minimal SDKv2 provider of the shape of ngrok's own terraform-provider-ngrok at commit 956bb08 (`bench/peer`, its own module: the module proxy does not serve that commit, and it speaks `Ngrok-Version` where Warren wants `Service-Version`): `http.DefaultClient`, a create is a POST then a GET, as ngrok's generated resources do.", n, tfParallelism, runs, n),
		Tables: []table{
			{Caption: "Times (median).", Header: header, Rows: [][]string{
				row(fmt.Sprintf("%d terraform_data", n), floor),
				row(fmt.Sprintf("%d Warren, mixed", n), mixed),
				row(fmt.Sprintf("%d warren_ip_policy", n), warrenIP),
				row(fmt.Sprintf("%d peer ngrok_ip_policy", n), peerIP),
			}},
			{Caption: "Against terraform_data (targets: apply ≤ 1.8×, no-change plan ≤ 3×).", Header: header, Rows: [][]string{
				ratios("Warren, mixed", mixed, floor),
				ratios("warren_ip_policy", warrenIP, floor),
				ratios("peer ngrok_ip_policy", peerIP, floor),
			}},
			{Caption: "Warren against the peer on the same IP policies (target: ≤ 1×).", Header: header, Rows: [][]string{
				ratios("warren_ip_policy / peer", warrenIP, peerIP),
			}},
		},
	}
	return res, nil
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
	var apply, plan, destroy []time.Duration
	for range runs {
		dir, err := os.MkdirTemp(s.e.dir, "tf-")
		if err != nil {
			return tfTimes{}, err
		}
		if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(w.config(n)), 0o644); err != nil {
			return tfTimes{}, err
		}
		tf := func(args ...string) (time.Duration, error) {
			cmd := exec.CommandContext(ctx, "terraform", append(args, "-no-color", "-input=false")...)
			cmd.Dir, cmd.Env = dir, env
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			start := time.Now()
			err := cmd.Run()
			took := time.Since(start)
			if err != nil {
				// plan -detailed-exitcode exits 2 when it has changes: after apply there must be none.
				return 0, fmt.Errorf("%s: terraform %s: %w\n%s", w.name, strings.Join(args, " "), err, tail(out.String(), 3000))
			}
			return took, nil
		}
		par := fmt.Sprintf("-parallelism=%d", tfParallelism)
		a, err := tf("apply", "-auto-approve", par)
		if err != nil {
			return tfTimes{}, err
		}
		p, err := tf("plan", "-detailed-exitcode", par)
		if err != nil {
			return tfTimes{}, err
		}
		d, err := tf("destroy", "-auto-approve", par)
		if err != nil {
			return tfTimes{}, err
		}
		apply, plan, destroy = append(apply, a), append(plan, p), append(destroy, d)
		_ = os.RemoveAll(dir)
	}
	return tfTimes{median(apply), median(plan), median(destroy)}, nil
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
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
