// Command terraform-provider-warren is the Terraform provider for Warren.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"runtime/pprof"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/warrenhq/terraform-provider-warren/provider"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	var debug bool
	flag.BoolVar(&debug, "debug", false, "run the provider with support for debuggers like delve")
	flag.Parse()

	// Run under a debugger, the provider's stderr is the developer's terminal, not terraform's.
	if !debug {
		quietUnlessLogging()
	}
	stopProfile := func() {}
	if prefix := os.Getenv(cpuProfileEnv); prefix != "" {
		stopProfile = profileCPU(prefix)
	}
	err := providerserver.Serve(context.Background(), provider.New(version), providerserver.ServeOpts{
		Address: "registry.terraform.io/warrenhq/warren",
		Debug:   debug,
	})
	stopProfile()
	if err != nil {
		log.Fatal(err)
	}
}

// cpuProfileEnv names a file prefix: when set, each provider process writes a CPU profile
// (pprof) of its whole life to <prefix>.<pid>.pprof. Terraform starts the provider several
// times per command, so each start gets its own file. For measuring the provider's own cost
// (make bench, terraform section); unset, nothing is profiled.
const cpuProfileEnv = "WARREN_PROVIDER_CPUPROFILE"

// profileCPU starts the CPU profile; the returned func stops it and closes the file. A
// profile that cannot be written is said on stderr and never stops the provider.
func profileCPU(prefix string) (stop func()) {
	f, err := os.Create(fmt.Sprintf("%s.%d.pprof", prefix, os.Getpid()))
	if err != nil {
		log.Printf("%s: %v", cpuProfileEnv, err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		log.Printf("%s: %v", cpuProfileEnv, err)
		_ = f.Close()
		return func() {}
	}
	return func() { pprof.StopCPUProfile(); _ = f.Close() }
}

// sdkLogLevels are the variables that set the levels of the SDK's loggers (terraform-plugin-go,
// the framework) and of the provider's own (tflog) in the provider process. The provider's
// root logger reads TF_LOG_PROVIDER_<NAME> (terraform-plugin-go, tf6server.New), not
// TF_LOG_PROVIDER, and logs at trace level when it is unset: without it, every API call's
// two debug lines (provider/resource_common.go, apiCall) were still written as JSON.
var sdkLogLevels = []string{"TF_LOG_SDK", "TF_LOG_SDK_PROTO", "TF_LOG_SDK_FRAMEWORK", "TF_LOG_PROVIDER", "TF_LOG_PROVIDER_WARREN"}

// quietUnlessLogging turns the provider's logging off when terraform's is off (terraform
// started the provider and reads its stderr). Unless told
// otherwise the SDK logs every RPC at trace level, as JSON lines on stderr that terraform
// parses and, without TF_LOG, throws away: a quarter of the provider's CPU time in a no-change
// plan of 300 resources (make bench, terraform section). Any TF_LOG… variable (TF_LOG,
// TF_LOG_PROVIDER, TF_LOG_PATH, TF_LOG_SDK_FRAMEWORK, …) or TF_ACC_LOG_PATH leaves every
// level as the variables say.
func quietUnlessLogging() {
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		if v != "" && (strings.HasPrefix(k, "TF_LOG") || k == "TF_ACC_LOG_PATH") {
			return
		}
	}
	for _, k := range sdkLogLevels {
		os.Setenv(k, "OFF")
	}
}
