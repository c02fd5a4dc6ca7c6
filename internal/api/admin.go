package api

// Operator endpoints under /_admin/, outside the public API (authenticated by the admin token).

// Account is a tenant: every object belongs to exactly one.
type Account struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	CreatedAt string `json:"created_at"`
	// Disabled: the account's API keys and tunnel credentials are refused (403 ERR_204).
	Disabled bool `json:"disabled"`
}

// User is a human principal of an account.
type User struct {
	ID        string `json:"id"`
	AccountID string `json:"account_id"`
	Email     string `json:"email"`
	Role      string `json:"role"`
	CreatedAt string `json:"created_at"`
}

// User roles.
const (
	RoleAdmin  = "admin"
	RoleMember = "member"
)

// AdminAccountCreate is the body of POST /_admin/accounts.
type AdminAccountCreate struct {
	Name       string `json:"name"`
	AdminEmail string `json:"admin_email"`
}

// AdminUserCreate is the body of POST /_admin/accounts/{account_id}/users.
type AdminUserCreate struct {
	Email string `json:"email"`
	Role  string `json:"role"`
}

// AdminGrant is what the admin endpoints return: the account, a user of it and an API key
// (with its token) that acts as that user.
type AdminGrant struct {
	Account Account `json:"account"`
	User    User    `json:"user"`
	APIKey  APIKey  `json:"api_key"`
}

// AdminDelivery is one event on its way to one destination (GET /_admin/deliveries).
type AdminDelivery struct {
	ID            string  `json:"id"`
	EventID       string  `json:"event_id"`
	DestinationID string  `json:"destination_id"`
	AccountID     string  `json:"account_id"`
	State         string  `json:"state"` // pending, delivered or failed
	Attempts      int     `json:"attempts"`
	NextAttemptAt *string `json:"next_attempt_at"` // when a pending delivery is tried next; null otherwise
	LastError     string  `json:"last_error"`      // "" when the last attempt succeeded or none was made
	CreatedAt     string  `json:"created_at"`
	UpdatedAt     string  `json:"updated_at"`
}
