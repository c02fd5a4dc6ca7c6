package provider

import (
	"errors"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/warrenhq/terraform-provider-warren/internal/rules"
)

// The rules of internal/rules checked at plan time, reported on the attribute they name.

// addViolation reports a broken rule of internal/rules on the attribute it names (a member
// path such as "tls.enabled" under at, the root for a resource's own rules).
func addViolation(diags *diag.Diagnostics, summary string, err error) {
	addViolationAt(diags, path.Empty(), summary, err)
}

func addViolationAt(diags *diag.Diagnostics, at path.Path, summary string, err error) {
	var v *rules.Violation
	if errors.As(err, &v) && v.Field != "" {
		for _, name := range strings.Split(v.Field, ".") {
			at = at.AtName(name)
		}
		diags.AddAttributeError(at, summary, v.Msg)
		return
	}
	if len(at.Steps()) > 0 {
		diags.AddAttributeError(at, summary, err.Error())
		return
	}
	diags.AddError(summary, err.Error())
}

// checkRule reports a rule of internal/rules at plan time once every value it needs is
// known (known is false while some value is still unknown).
func checkRule(diags *diag.Diagnostics, summary string, known bool, rule func() error) {
	if !known {
		return
	}
	if err := rule(); err != nil {
		addViolation(diags, summary, err)
	}
}
