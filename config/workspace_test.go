package config

import (
	"strings"
	"testing"
)

func TestWorkspaceSearch(t *testing.T) {
	c, err := Load(env(map[string]string{}))
	if err != nil || c.WorkspaceSearch || len(c.WorkspaceSearchChannels) != 0 {
		t.Fatalf("default: %v, %+v; want off", err, c.WorkspaceSearchChannels)
	}
	c, err = Load(env(map[string]string{"SLACK_WORKSPACE_SEARCH": "true", "SLACK_WORKSPACE_SEARCH_CHANNELS": "C01ABC, D02XYZ"}))
	if err != nil || !c.WorkspaceSearch || len(c.WorkspaceSearchChannels) != 2 || c.WorkspaceSearchChannels[1] != "D02XYZ" {
		t.Errorf("on: %v, %v, %v", err, c.WorkspaceSearch, c.WorkspaceSearchChannels)
	}
	if _, err := Load(env(map[string]string{"SLACK_WORKSPACE_SEARCH_CHANNELS": "#infra"})); err == nil || !strings.Contains(err.Error(), "SLACK_WORKSPACE_SEARCH_CHANNELS") {
		t.Errorf("a channel name: %v, want an error naming the variable", err)
	}
}
