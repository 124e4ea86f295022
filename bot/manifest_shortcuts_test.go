package bot

import (
	"os"
	"testing"

	"github.com/researchbot/researchbot/bot/blockkit"
	"go.yaml.in/yaml/v4"
)

// TestManifestDeclaresTheShortcuts checks that every shortcut the bot
// handles is in the manifest with its callback id and type, that the
// manifest declares no shortcut the bot does not handle, and that
// interactivity (which shortcuts need) is on.
func TestManifestDeclaresTheShortcuts(t *testing.T) {
	raw, err := os.ReadFile("../slack-app-manifest.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Features struct {
			Shortcuts []struct {
				Name, Type, Description string
				CallbackID              string `yaml:"callback_id"`
			}
		}
		Settings struct {
			Interactivity struct {
				IsEnabled bool `yaml:"is_enabled"`
			}
		}
	}
	if err := yaml.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{blockkit.ShortcutStart: "global", blockkit.ShortcutResearchThis: "message"}
	for _, s := range m.Features.Shortcuts {
		typ, ok := want[s.CallbackID]
		if !ok || typ != s.Type {
			t.Errorf("the manifest's shortcut %q (%s, %s) is not one the bot handles", s.Name, s.Type, s.CallbackID)
		}
		if s.Name == "" || s.Description == "" || len(s.Description) > 80 {
			t.Errorf("shortcut %s needs a name and a description of at most 80 characters", s.CallbackID)
		}
		delete(want, s.CallbackID)
	}
	for id, typ := range want {
		t.Errorf("the manifest lacks the %s shortcut %s", typ, id)
	}
	if !m.Settings.Interactivity.IsEnabled {
		t.Error("shortcuts need interactivity enabled")
	}
}
