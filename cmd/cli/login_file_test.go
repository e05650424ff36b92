package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A login file that cannot be read does not stop a command, but the user is told
// that the default server of auth login is not used (instead of silently finding
// the demo graph), once; config shows it; the auth commands say it as their error.
func TestUnreadableLoginFileIsSaid(t *testing.T) {
	t.Parallel()
	cfgDir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(cfgDir, "nodius-ai"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfgDir, "nodius-ai", "hosts.json"), []byte("{bad"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"XDG_CONFIG_HOME": cfgDir, "XDG_DATA_HOME": t.TempDir(), "NODIUS_AI_KEYRING": "off"}
	const said = "the default server of auth login is not used"

	_, errOut, code := runCLI(t, "", env, "threads", "list")
	if code != 0 || strings.Count(errOut, said) != 1 || !strings.Contains(errOut, "hosts.json is not valid") {
		t.Errorf("threads list: code %d, stderr %q; want one warning naming the login file", code, errOut)
	}
	out, errOut, code := runCLI(t, "", env, "config")
	if code != 0 || !strings.Contains(out, "default server") || !strings.Contains(out, said) || strings.Contains(errOut, said) {
		t.Errorf("config: code %d, out %q, stderr %q; want a default server row saying it, once", code, out, errOut)
	}
	_, errOut, code = runCLI(t, "", env, "auth", "status")
	if code == 0 || !strings.Contains(errOut, "hosts.json is not valid") || strings.Contains(errOut, said) {
		t.Errorf("auth status: code %d, stderr %q; want its own error only", code, errOut)
	}
}
