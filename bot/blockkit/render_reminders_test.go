package blockkit

import (
	"strings"
	"testing"
	"time"

	"github.com/researchbot/researchbot/checkpoints"
)

func TestReminderPolicyTextStatesTheSchedule(t *testing.T) {
	def := checkpoints.Definition{Required: true, Timeout: time.Hour}
	for _, tc := range []struct {
		name string
		edit func(*checkpoints.Definition)
		want string
	}{
		{"the default", func(*checkpoints.Definition) {},
			"3 reminders at 1h 00m, 3h 00m, 7h 00m after the offer (backing off ×2, at most 24h 00m apart), then the admins are told at 15h 00m; then no more, the run keeps waiting"},
		{"no timeout", func(d *checkpoints.Definition) { d.Timeout = 0 }, "no reminders (no timeout)"},
		{"optional", func(d *checkpoints.Definition) { d.Required = false }, "skipped at its timeout (optional)"},
		{"requester, fixed", func(d *checkpoints.Definition) {
			d.Reminders = &checkpoints.ReminderPolicy{Count: 2, Factor: 1, Escalate: checkpoints.EscalateRequester}
		}, "2 reminders at 1h 00m, 2h 00m after the offer (at a fixed interval), then the requester is told at 3h 00m; then no more"},
		{"none", func(d *checkpoints.Definition) {
			d.Reminders = &checkpoints.ReminderPolicy{Count: 0, Factor: 1, Escalate: checkpoints.EscalateNone}
		}, "no reminders: at the timeout nobody else is told; the run keeps waiting"},
		{"approve first", func(d *checkpoints.Definition) { d.OnTimeout = checkpoints.TimeoutApprove }, "approves itself at its timeout; if it cannot, 3 reminders"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := def
			tc.edit(&d)
			if got := ReminderPolicyText(d); !strings.Contains(got, tc.want) {
				t.Fatalf("%q\nwant it to contain %q", got, tc.want)
			}
		})
	}
}
