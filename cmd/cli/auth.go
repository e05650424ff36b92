package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"github.com/nodius/nodius-ai/config"
	"github.com/nodius/nodius-ai/internal/credstore"
	"github.com/nodius/nodius-ai/internal/fault"
	"github.com/nodius/nodius-ai/internal/nodiusapi"
	"github.com/nodius/nodius-ai/internal/termtext"
)

// credStore is where auth login keeps tokens: the OS keyring, else hosts.json in
// the config directory. NODIUS_AI_KEYRING=off keeps the keyring out (CI, tests);
// on Linux without a D-Bus session there is no keyring to ask (and none is started).
func (f *Factory) credStore() (*credstore.Store, error) {
	p := config.DefaultConfigPath(f.IO.Getenv)
	if p == "" {
		return nil, &fault.Error{Code: fault.Config, Message: "no home directory to keep logins in — set HOME or XDG_CONFIG_HOME"}
	}
	s := &credstore.Store{Dir: filepath.Dir(p), Keyring: credstore.System{}}
	if strings.EqualFold(f.IO.Getenv("NODIUS_AI_KEYRING"), "off") ||
		(runtime.GOOS == "linux" && f.IO.Getenv("DBUS_SESSION_BUS_ADDRESS") == "") {
		s.Keyring = nil
	}
	return s, nil
}

// storedToken is config.StoredToken over the credential store.
func (f *Factory) storedToken(host string) (string, string, error) {
	s, err := f.credStore()
	if err != nil {
		return "", "", nil // no home: nothing stored
	}
	c, ok, err := s.Token(host)
	if err != nil || !ok {
		return "", "", err
	}
	return c.Token, whereText(s, c.Where), nil
}

func whereText(s *credstore.Store, where string) string {
	if where == credstore.InKeyring {
		return "system keyring"
	}
	return s.Path()
}

func newAuthCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "auth",
		Short: "Log in to a Nodius server, see and forget logins",
		Long: `Keeps one token per Nodius server (scheme, host and port), in the system keyring
where there is one, else in a file only you can read. A stored token is sent only
to the server it was issued for. --token and NODIUS_AI_TOKEN still win, for the
server the configuration names (--agent, --source, NODIUS_AI_AGENT, ...) only.

The last server logged in to is the default: when no flag, variable or config file
names an agent or a source, commands use it (its graphs, and its assistant unless
you chose a model for nodius-ai's own agent). 'auth switch' chooses another.`,
	}
	// The auth commands say themselves what is wrong with the login file.
	cmd.PersistentPreRun = func(*cobra.Command, []string) { f.quietLogin = true }
	cmd.AddCommand(newAuthLoginCmd(f), newAuthStatusCmd(f), newAuthSwitchCmd(f), newAuthLogoutCmd(f))
	return cmd
}

// authUser is the user part of the server's login and me answers.
type authUser struct {
	UserID   string   `json:"userId"`
	Username string   `json:"username"`
	Roles    []string `json:"roles"`
}

// authAnswer is the body of /api/auth/login and /api/auth/me.
type authAnswer struct {
	Success bool     `json:"success"`
	Token   string   `json:"token"`
	Error   string   `json:"error"`
	Message string   `json:"message"`
	User    authUser `json:"user"`
}

// authHTTP asks the server's auth endpoint path: body nil is a GET. It goes
// through the one client of the Nodius server (nodiusapi): a redirect to another
// origin is not followed (a token or password is not carried to another place).
// status is the HTTP status; a network failure is a fault.Network.
func authHTTP(ctx context.Context, server, path, token string, body any) (authAnswer, int, error) {
	var a authAnswer
	api, err := nodiusapi.New(nodiusapi.Options{BaseURL: server, Token: token, Timeout: 20 * time.Second, MaxBytes: 1 << 20})
	if err != nil {
		return a, 0, usageError("%s is not a server URL: %v", config.RedactURL(server), err)
	}
	method := http.MethodGet
	if body != nil {
		method = http.MethodPost
	}
	ans, err := api.Do(ctx, method, path, body)
	if err != nil {
		return a, 0, err
	}
	if err := json.Unmarshal(ans.Body, &a); err != nil && ans.Status < 300 {
		return a, ans.Status, &fault.Error{Code: fault.ServerError, Message: fmt.Sprintf(
			"%s answered %s with something that is not a Nodius login answer (HTTP %d) — is it a Nodius server?", config.RedactURL(server), path, ans.Status)}
	}
	return a, ans.Status, nil
}

// refusalReason says why a server refused a token, from its error text.
func refusalReason(why string) string {
	why = termtext.OneLine(why)
	switch low := strings.ToLower(why); {
	case strings.Contains(low, "revoked"):
		return "was revoked by a newer login or a logout of the same user (in the web editor or another terminal)"
	case strings.Contains(low, "expired"):
		return "has expired"
	case why == "":
		return "is refused"
	}
	return "is refused (" + why + ")"
}

// loginAgain is what to do about a refused token.
func loginAgain(host string) string {
	return fmt.Sprintf("run 'nodius-ai auth login --server %s' (--with-token keeps your web editor session)", host)
}

// checkToken asks GET /api/auth/me whether server accepts token. A refusal is not an
// error: refused says why (see refusalReason).
func checkToken(ctx context.Context, server, host, token string) (u authUser, refused string, err error) {
	a, status, err := authHTTP(ctx, server, "api/auth/me", token, nil)
	if err != nil {
		return authUser{}, "", err
	}
	switch {
	case status == http.StatusOK && a.Success:
		return a.User, "", nil
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		why := a.Error
		if why == "" {
			why = a.Message
		}
		return authUser{}, refusalReason(why), nil
	}
	return authUser{}, "", &fault.Error{Code: fault.ServerError, Message: fmt.Sprintf("%s answered /api/auth/me with HTTP %d", host, status)}
}

type authLoginOptions struct {
	server, username string
	withToken, yes   bool
	insecure         bool
}

func newAuthLoginCmd(f *Factory) *cobra.Command {
	var o authLoginOptions
	cmd := &cobra.Command{
		Use:   "login --server URL",
		Short: "Log in to a Nodius server and store the token",
		Long: `With a password (asked on the terminal; not echoed), the server issues a new token
and REVOKES the user's previous one: that user's web editor session is signed out.
You are told so and asked first (--yes to skip).

--with-token reads an existing token (the web editor's) from standard input and
leaves every session alone: the server keeps one token per user.

The token is never printed. It goes to the system keyring, else to a file only you
can read (--insecure-storage chooses the file).

The server becomes the default server: commands use it when no flag, variable or
config file names an agent or a source ('nodius-ai auth status' says how).`,
		Example: `  nodius-ai auth login --server https://nodius.example
  nodius-ai auth login --server https://nodius.example --with-token < token.txt`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runAuthLogin(cmd.Context(), f, o) },
	}
	cmd.Flags().StringVar(&o.server, "server", "", "the Nodius server's URL (default: the configured server)")
	cmd.Flags().StringVar(&o.username, "username", "", "the user to log in as (asked when not given)")
	cmd.Flags().BoolVar(&o.withToken, "with-token", false, "read a token from standard input instead of logging in with a password")
	cmd.Flags().BoolVar(&o.yes, "yes", false, "log in with a password without asking (it revokes the user's other sessions)")
	cmd.Flags().BoolVar(&o.insecure, "insecure-storage", false, "store the token in a 0600 file, not the system keyring")
	return cmd
}

// authServer is --server, else the server in effect (the one the configuration
// names, else the default server).
func authServer(f *Factory, flag string) (server, host string, err error) {
	server = strings.TrimPrefix(strings.TrimSpace(flag), "server:")
	if server == "" {
		if cfg, err := f.Config(); err == nil {
			server, _ = cfg.Server()
		}
	}
	if server == "" {
		return "", "", usageError("pass --server URL, the Nodius server to log in to (like https://nodius.example)")
	}
	host, err = credstore.Host(server)
	if err != nil {
		return "", "", usageError("--server: %v", err)
	}
	return server, host, nil
}

func runAuthLogin(ctx context.Context, f *Factory, o authLoginOptions) error {
	server, host, err := authServer(f, o.server)
	if err != nil {
		return err
	}
	store, err := f.credStore()
	if err != nil {
		return err
	}
	in := bufio.NewReader(f.IO.In)
	var token, user string
	if o.withToken {
		if f.IO.InTTY {
			fmt.Fprintf(f.IO.ErrOut, "Paste the token for %s (not shown): ", host)
		}
		token, err = readSecret(f, in)
		if err != nil {
			return err
		}
		if token == "" {
			return usageError("no token on standard input: pipe it in, as in 'nodius-ai auth login --server %s --with-token < token.txt'", host)
		}
		u, refused, err := checkToken(ctx, server, host, token)
		if err != nil {
			return err
		}
		if refused != "" {
			return &fault.Error{Code: fault.Auth, Message: fmt.Sprintf("auth: %s did not accept this token: it %s; nothing was stored", host, refused)}
		}
		user = u.Username
	} else {
		user = strings.TrimSpace(o.username)
		if user == "" {
			if !f.IO.InTTY {
				return usageError("standard input is not a terminal: pass --username U and the password on standard input, or --with-token")
			}
			fmt.Fprintf(f.IO.ErrOut, "Username on %s: ", host)
			line, err := in.ReadString('\n')
			if err != nil && !errors.Is(err, io.EOF) {
				return fmt.Errorf("read the username: %w", err)
			}
			if user = strings.TrimSpace(line); user == "" {
				return usageError("no username given")
			}
		}
		fmt.Fprintf(f.IO.ErrOut, "A password login makes %s issue a new token for %s and revoke the previous one:\n"+
			"%s's web editor session (and any other terminal logged in as %s) will be signed out.\n"+
			"To keep them, log in with the web editor's token instead: --with-token.\n",
			host, termtext.OneLine(user), termtext.OneLine(user), termtext.OneLine(user))
		if !o.yes {
			if !f.IO.InTTY {
				return usageError("refusing to log in with a password without confirmation: standard input is not a terminal; pass --yes (or use --with-token)")
			}
			fmt.Fprint(f.IO.ErrOut, "Log in and sign out the other sessions? [y/N]: ")
			line, err := in.ReadString('\n')
			if err != nil && !errors.Is(err, io.EOF) {
				return fmt.Errorf("read the confirmation: %w", err)
			}
			if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
				fmt.Fprintln(f.IO.ErrOut, "Not logged in; nothing was sent.")
				return nil
			}
		}
		if f.IO.InTTY {
			fmt.Fprintf(f.IO.ErrOut, "Password for %s (not shown): ", termtext.OneLine(user))
		}
		pass, err := readSecret(f, in)
		if err != nil {
			return err
		}
		if pass == "" {
			return usageError("no password given")
		}
		a, status, err := authHTTP(ctx, server, "api/auth/login", "", map[string]string{"username": user, "password": pass})
		if err != nil {
			return err
		}
		switch {
		case status == http.StatusOK && a.Success && a.Token != "":
			token = a.Token
			if a.User.Username != "" {
				user = a.User.Username
			}
		case status == http.StatusUnauthorized || status == http.StatusBadRequest:
			why := termtext.OneLine(a.Error)
			if why == "" {
				why = "refused"
			}
			return &fault.Error{Code: fault.Auth, Message: fmt.Sprintf("auth: %s refused the login (%s); nothing was stored", host, why)}
		case status == http.StatusTooManyRequests:
			return &fault.Error{Code: fault.RateLimit, Message: fmt.Sprintf("%s refuses more login attempts for now (HTTP 429): wait and try again", host)}
		default:
			return &fault.Error{Code: fault.ServerError, Message: fmt.Sprintf("%s answered the login with HTTP %d: %s", host, status, termtext.OneLine(a.Error))}
		}
	}
	where, err := store.Save(host, user, token, o.insecure)
	if err != nil {
		return &fault.Error{Code: fault.Storage, Message: "the login worked but the token could not be stored: " + err.Error(), Err: err}
	}
	fmt.Fprintf(f.IO.ErrOut, "Logged in to %s as %s. The token is in %s.\n", host, termtext.OneLine(user), where)
	if store.Keyring == nil && !o.insecure {
		fmt.Fprintln(f.IO.ErrOut, "(No system keyring here: the file is readable by you only.)")
	}
	fmt.Fprintln(f.IO.ErrOut, defaultNews(f, host))
	return nil
}

// defaultNews says that host is now the default server and what commands do with
// it, or what names another server first (a flag, a variable, the config file).
func defaultNews(f *Factory, host string) string {
	news := fmt.Sprintf("%s is now the default server: commands use it when nothing else names a server", host)
	cfg, err := f.loadConfig(host)
	if err != nil {
		return news + "."
	}
	if named, from := namedElsewhere(cfg); named != "" {
		return fmt.Sprintf("%s, but %s names %s, which comes first.", news, from, named)
	}
	return news + " (" + defaultEffect(cfg) + ")."
}

// namedElsewhere is what the configuration names instead of the default server
// (an agent server, else a source) and the setting naming it; "" when nothing is.
func namedElsewhere(cfg *config.Config) (what, from string) {
	if o := cfg.Origins["agent"]; strings.HasPrefix(cfg.Agent, "server:") && o != config.OriginLogin {
		return config.RedactURL(cfg.Agent), o
	}
	if o := cfg.Origins["source"]; o != config.OriginLogin && o != config.OriginDefault && o != config.OriginThread {
		return "the source " + config.RedactURL(cfg.Source), o
	}
	return "", ""
}

// defaultEffect says who answers on the default server's graphs: its assistant,
// or nodius-ai's own agent when a model was chosen for it.
func defaultEffect(cfg *config.Config) string {
	if cfg.Origins["agent"] == config.OriginLogin {
		return "its assistant answers, on its graphs"
	}
	if cfg.OwnModel != "" {
		return fmt.Sprintf("nodius-ai's own agent answers, as %s chose, on its graphs", cfg.OwnModel)
	}
	return "nodius-ai's own agent answers, on its graphs"
}

// readSecret reads one line: from the terminal without echo when standard input is
// one, else from the input as it comes.
func readSecret(f *Factory, in *bufio.Reader) (string, error) {
	if file, ok := f.IO.In.(*os.File); ok && f.IO.InTTY && in.Buffered() == 0 {
		b, err := term.ReadPassword(file.Fd())
		fmt.Fprintln(f.IO.ErrOut)
		if err != nil {
			return "", fmt.Errorf("read from the terminal: %w", err)
		}
		return strings.TrimSpace(string(b)), nil
	}
	line, err := in.ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("read standard input: %w", err)
	}
	return strings.TrimSpace(line), nil
}

func newAuthStatusCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "Show the servers logged in to, and whether each still accepts its token",
		Long: `For each stored login: the server, the user, where the token is kept, and whether
the server still accepts it (GET /api/auth/me). Exits 1 when one is refused.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			store, err := f.credStore()
			if err != nil {
				return err
			}
			list, err := store.List()
			if err != nil {
				return err
			}
			w := f.IO.Out
			def, _ := store.Default()
			cfg, cfgErr := f.Config()
			if cfgErr == nil && cfg.Token != "" {
				fmt.Fprintln(w, tokenNote(cfg))
			}
			if len(list) == 0 {
				fmt.Fprintln(w, "Not logged in to any server. Log in with: nodius-ai auth login --server URL")
				return nil
			}
			switch {
			case def == "":
				// A command that runs as printed: a server logged in to.
				fmt.Fprintf(w, "No default server: commands use one only when a flag, a variable or the config file names it; choose one with 'nodius-ai auth switch --server %s'.\n", list[0].Host)
			case cfgErr != nil:
				fmt.Fprintf(w, "Default server: %s, from auth login.\n", def)
			default:
				if named, from := namedElsewhere(cfg); named != "" {
					fmt.Fprintf(w, "Default server: %s, from auth login; not in use now: %s names %s, which comes first.\n", def, from, named)
				} else {
					fmt.Fprintf(w, "Default server: %s, from auth login: %s.\n", def, defaultEffect(cfg))
				}
			}
			bad := false
			for _, c := range list {
				where := whereText(store, c.Where)
				user := termtext.OneLine(c.User)
				if user == "" {
					user = "(unknown user)"
				}
				if c.Token == "" {
					bad = true
					fmt.Fprintf(w, "✗ %s (%s): the token cannot be read from %s — %s.\n", c.Host, user, where, loginAgain(c.Host))
					continue
				}
				u, refused, err := checkToken(ctx, c.Host, c.Host, c.Token)
				switch {
				case err != nil:
					bad = true
					msg := err.Error()
					var fe *fault.Error
					if errors.As(err, &fe) {
						msg = fe.Message
					}
					fmt.Fprintf(w, "✗ %s (%s, token in %s): %s\n", c.Host, user, where, termtext.OneLine(msg))
				case refused != "":
					bad = true
					fmt.Fprintf(w, "✗ %s (%s, token in %s): the token %s — %s.\n", c.Host, user, where, refused, loginAgain(c.Host))
				default:
					if u.Username != "" {
						user = termtext.OneLine(u.Username)
					}
					mark := ""
					if c.Host == def {
						mark = ", the default server"
					}
					fmt.Fprintf(w, "✓ %s: logged in as %s (token in %s)%s\n", c.Host, user, where, mark)
				}
			}
			if bad {
				return &ExitError{Code: ExitRuntime}
			}
			return nil
		},
	}
}

func newAuthLogoutCmd(f *Factory) *cobra.Command {
	var server string
	var revoke bool
	cmd := &cobra.Command{
		Use:   "logout [--server URL]",
		Short: "Forget a server's stored token",
		Long: `Forgets the token stored for a server, here only: the web editor and other
terminals stay signed in. The Nodius server keeps one token per user, and its logout
clears that token whatever token asks, so --revoke (which calls it) signs the user
out everywhere, the web editor included.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			store, err := f.credStore()
			if err != nil {
				return err
			}
			var host string
			if server != "" {
				if host, err = credstore.Host(server); err != nil {
					return usageError("--server: %v", err)
				}
			} else {
				list, err := store.List()
				if err != nil {
					return err
				}
				switch len(list) {
				case 0:
					fmt.Fprintln(f.IO.ErrOut, "Not logged in to any server.")
					return nil
				case 1:
					host = list[0].Host
				default:
					hosts := make([]string, len(list))
					for i, c := range list {
						hosts[i] = c.Host
					}
					return usageError("logged in to several servers (%s): pass --server URL", strings.Join(hosts, ", "))
				}
			}
			c, found, err := store.Token(host)
			if err != nil {
				return err
			}
			if revoke && found {
				if _, _, err := authHTTP(cmd.Context(), host, "api/auth/logout", c.Token, struct{}{}); err != nil {
					return err
				}
			}
			wasDefault, _ := store.Default()
			ok, err := store.Delete(host)
			if err != nil {
				return err
			}
			if !ok {
				fmt.Fprintf(f.IO.ErrOut, "No token is stored for %s.\n", host)
				return nil
			}
			msg := fmt.Sprintf("Forgot the token for %s (the server still accepts it until it expires or a new login replaces it)", host)
			if revoke {
				msg = fmt.Sprintf("Logged out of %s everywhere and forgot its token here", host)
			}
			if host == wasDefault {
				now := "commands use the demo graph again"
				if cfg, err := f.Config(); err == nil {
					if named, from := namedElsewhere(cfg); named != "" {
						now = fmt.Sprintf("commands use %s, which %s names", named, from)
					}
				}
				msg += "; it was the default server, so there is none now: " + now
				if rest, err := store.List(); err == nil && len(rest) > 0 {
					msg += fmt.Sprintf(" (or run 'nodius-ai auth switch --server %s')", rest[0].Host)
				}
			}
			fmt.Fprintln(f.IO.ErrOut, msg+".")
			return nil
		},
	}
	cmd.Flags().StringVar(&server, "server", "", "the server to forget (default: the only one logged in to)")
	cmd.Long += "\n\nLogging out of the default server leaves none: commands use the demo graph again\nuntil you log in or choose another with 'nodius-ai auth switch'."
	cmd.Flags().BoolVar(&revoke, "revoke", false, "also revoke the token on the server: signs the user out everywhere, the web editor included")
	return cmd
}

// tokenNote says where a configured token (--token, NODIUS_AI_TOKEN, the config
// file's) goes: to the server the configuration names, else to none.
func tokenNote(cfg *config.Config) string {
	by := cfg.Origins["token"]
	if to := cfg.ConfiguredServer(); to != "" {
		return fmt.Sprintf("A token is set by %s (hidden): it is sent to %s only.", by, config.RedactURL(to))
	}
	note := fmt.Sprintf("A token is set by %s (hidden), but no server is named by --agent, --source, NODIUS_AI_AGENT, NODIUS_AI_SOURCE or the config file, so it is sent to none", by)
	if s, origin := cfg.Server(); origin == config.OriginLogin {
		note += fmt.Sprintf(" (the default server %s gets the token auth login stored for it)", s)
	}
	return note + "."
}

func newAuthSwitchCmd(f *Factory) *cobra.Command {
	var server string
	cmd := &cobra.Command{
		Use:   "switch [--server URL]",
		Short: "Choose which server logged in to is the default",
		Long: `Makes another server you are logged in to the default: commands use it when no
flag, variable or config file names an agent or a source. Logged in to two servers,
'auth switch' alone chooses the other one. Nothing is sent to any server.`,
		Example: `  nodius-ai auth switch --server https://nodius.example`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			store, err := f.credStore()
			if err != nil {
				return err
			}
			list, err := store.List()
			if err != nil {
				return err
			}
			def, err := store.Default()
			if err != nil {
				return err
			}
			var host string
			switch {
			case server != "":
				if host, err = credstore.Host(server); err != nil {
					return usageError("--server: %v", err)
				}
			case len(list) == 0:
				return usageError("not logged in to any server: log in with 'nodius-ai auth login --server URL'")
			case len(list) == 1:
				host = list[0].Host
			case len(list) == 2 && def != "":
				host = list[0].Host
				if host == def {
					host = list[1].Host
				}
			default:
				hosts := make([]string, len(list))
				for i, c := range list {
					hosts[i] = c.Host
				}
				return usageError("logged in to several servers (%s): pass --server URL", strings.Join(hosts, ", "))
			}
			if err := store.SetDefault(host); err != nil {
				if errors.Is(err, credstore.ErrNotLoggedIn) {
					return usageError("not logged in to %s: log in first with 'nodius-ai auth login --server %s'", host, host)
				}
				return err
			}
			user := ""
			for _, c := range list {
				if c.Host == host && c.User != "" {
					user = " (logged in as " + termtext.OneLine(c.User) + ")"
				}
			}
			if host == def {
				fmt.Fprintf(f.IO.ErrOut, "%s%s was already the default server.\n", host, user)
				return nil
			}
			fmt.Fprintln(f.IO.ErrOut, strings.Replace(defaultNews(f, host), host+" is now", host+user+" is now", 1))
			return nil
		},
	}
	cmd.Flags().StringVar(&server, "server", "", "the server to make the default (one you are logged in to)")
	return cmd
}
