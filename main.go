// Command terraform-provider-warren is the Terraform provider for Warren.
package main

import (
	"context"
	"flag"
	"log"
	"os"
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
	err := providerserver.Serve(context.Background(), provider.New(version), providerserver.ServeOpts{
		Address: "registry.terraform.io/warrenhq/warren",
		Debug:   debug,
	})
	if err != nil {
		log.Fatal(err)
	}
}

// sdkLogLevels are the variables that set the levels of the SDK's loggers (terraform-plugin-go,
// the framework) and of the provider's own (tflog) in the provider process.
var sdkLogLevels = []string{"TF_LOG_SDK", "TF_LOG_SDK_PROTO", "TF_LOG_SDK_FRAMEWORK", "TF_LOG_PROVIDER"}

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
