package edge

import (
	"fmt"
	"net/http"
	"regexp"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// userAgentFilter is a route's user_agent_filter step (details.md §8.9). The first
// User-Agent header of a request is matched against the RE2 patterns (unanchored, as
// regexp.MatchString): a request that matches an allow pattern passes, whatever the deny
// patterns say (allow carves exceptions out of deny); otherwise one without a User-Agent
// (or with an empty one) is refused, and so is one that matches a deny pattern; any other
// passes, so an allow list alone refuses nothing but the missing User-Agent.
type userAgentFilter struct {
	allow, deny []*regexp.Regexp
}

// userAgentFilterModule compiles a user_agent_filter module; nil when off. The patterns
// were checked when written (ERR_2090): one that does not compile now fails the route.
func userAgentFilterModule(m *api.UserAgentFilterModule) (*userAgentFilter, error) {
	if m == nil || !m.Enabled {
		return nil, nil
	}
	f := &userAgentFilter{}
	var err error
	if f.allow, err = compilePatterns(m.Allow); err == nil {
		f.deny, err = compilePatterns(m.Deny)
	}
	return f, err
}

func compilePatterns(patterns []string) ([]*regexp.Regexp, error) {
	out := make([]*regexp.Regexp, 0, len(patterns))
	for _, p := range patterns {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, fmt.Errorf("user_agent_filter: %w", err)
		}
		out = append(out, re)
	}
	return out, nil
}

func (f *userAgentFilter) serve(w http.ResponseWriter, r *http.Request, x *exchange, next handler) {
	if !f.allows(r.Header.Get("User-Agent")) {
		x.refuse(w, http.StatusForbidden, errUserAgent, "The route does not accept requests from this user agent.")
		return
	}
	next(w, r, x)
}

func (f *userAgentFilter) allows(ua string) bool {
	switch {
	case anyMatch(f.allow, ua):
		return true
	case ua == "":
		return false
	default:
		return !anyMatch(f.deny, ua)
	}
}

func anyMatch(patterns []*regexp.Regexp, s string) bool {
	for _, re := range patterns {
		if re.MatchString(s) {
			return true
		}
	}
	return false
}
