package bot

import (
	"encoding/json"
	"flag"
	"path/filepath"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/internal/goldentest"
	"github.com/researchbot/researchbot/pipeline"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// golden compares v's JSON with testdata/golden/name.json (or rewrites it).
func golden(t *testing.T, name string, v any) {
	t.Helper()
	goldentest.JSON(t, filepath.Join("testdata", "golden", name+".json"), v, *update)
}

// msg wraps blocks like a chat.postMessage body.
func msg(blocks []slack.Block) map[string]any { return map[string]any{"blocks": blocks} }

func TestGoldenMessages(t *testing.T) {
	changes := []checkpoints.Change{{Key: "depth", Before: "standard", After: "comprehensive"}, {Key: "sub_questions", Before: "a long list of questions that goes on and on and on and on and on and on", After: "another long list of questions that goes on and on and on and on"}}
	partial := finishedRun()
	partial.Status = pipeline.StatusPartial
	partial.Report.Status, partial.Report.Reason = "partial", "The cost limit of $2.00 was reached."
	partial.Report.Caveats = []string{"Only 2 of 12 pages could be read."}
	partial.Bounds = []string{"max_cost_usd"}
	failed := sampleRun()
	failed.Status, failed.Failure = pipeline.StatusFailed, "the model endpoint kept answering 500 <!channel>"
	cancelled := sampleRun()
	cancelled.Status = pipeline.StatusCancelled
	waiting := sampleRun()
	waiting.Status, waiting.Step, waiting.Waiting = pipeline.StatusWaiting, pipeline.StepSearch, "run-42.cp-1"
	waiting.Checkpoints = []checkpoints.Instance{*planInstance()}
	reminder := planInstance()
	reminder.Attempt = 2
	timedOut := planInstance()
	timedOut.State = checkpoints.StateTimedOut
	now := t0.Add(3*time.Minute + 7*time.Second)
	optional := allTypesInstance()
	optional.Required = false
	notPassed := draftInstance()
	notPassed.Payload = mustJSON(func() pipeline.DraftPayload {
		var p pipeline.DraftPayload
		_ = json.Unmarshal(draftInstance().Payload, &p)
		p.Score, p.Recommendation, p.NotPassed, p.Summary, p.Diff = 3.2, "reject", true, "Off topic; the sources do not answer the question.", nil
		p.Claims.Unsupported[0].Also = []pipeline.ClaimView{{SourceID: 1, Source: "Keeping RAG fresh", Reason: "no supporting quote was given"}}
		p.Claims.Unsupported[0].Sentence = "Indexes go stale within 30 days [1, 3]."
		p.Claims.ClaimTally.Unsupported, p.Claims.Total, p.AtRevisionLimit = 4, 16, true
		return p
	}())
	selfApproving := planInstance()
	selfApproving.OnTimeout = checkpoints.TimeoutApprove
	inDays := planInstance()
	inDays.DeadlineAt = t0.Add(50*time.Hour + 5*time.Minute)
	selfApproved := decided(allTypesInstance(), checkpoints.Approve, "", nil)
	selfApproved.Decision.By = checkpoints.ByTimeout
	stranded := planInstance()
	stranded.State, stranded.Attempt, stranded.LastError = checkpoints.StateFailed, 4, "channel_not_found <!channel>"

	cases := map[string][]slack.Block{
		"root_starting":       blockkit.RenderRoot(blockkit.RootInfo{Question: "What is <!here> RAG?\nSecond line", RequestedBy: "U123", Mode: "guided", Depth: pipeline.DepthStandard}),
		"root_named":          blockkit.RenderRoot(blockkit.RootInfo{Question: "What is RAG?", RunID: "run-42", RequestedBy: "U123", Mode: "full", Depth: pipeline.DepthQuick, Status: pipeline.StatusQueued}),
		"checkpoint_plan":     blockkit.RenderCheckpoint(planInstance(), "U123"),
		"checkpoint_reminder": blockkit.RenderCheckpoint(reminder, "U123"),
		"checkpoint_sources":  blockkit.RenderCheckpoint(sourcesInstance(), "U123"),
		"checkpoint_draft":    blockkit.RenderCheckpoint(draftInstance(), "U123"),
		"draft_not_passed":    blockkit.RenderCheckpoint(notPassed, "U123"),
		"checkpoint_critical": blockkit.RenderCheckpoint(criticalInstance(), "U123"),
		"checkpoint_generic":  blockkit.RenderCheckpoint(allTypesInstance(), ""),
		"checkpoint_optional": blockkit.RenderCheckpoint(optional, "U123"),
		"checkpoint_stranded": blockkit.RenderStranded(stranded),
		"decided_approve":     blockkit.RenderDecided(decided(planInstance(), checkpoints.Approve, "", nil)),
		"decided_edit":        blockkit.RenderDecided(decided(planInstance(), checkpoints.Edit, "", changes)),
		"decided_reject":      blockkit.RenderDecided(decided(draftInstance(), checkpoints.Reject, "Too shallow <!channel>", nil)),
		"decided_timed_out":   blockkit.RenderDecided(timedOut),
		"self_approving":      blockkit.RenderCheckpoint(selfApproving, "U123"),
		"self_approved":       blockkit.RenderDecided(selfApproved),
		// The countdown at its edges, counted from the moment of rendering.
		"countdown_passed":       blockkit.RenderCheckpointAt(selfApproving, "U123", selfApproving.DeadlineAt.Add(time.Second)),
		"countdown_under_minute": blockkit.RenderCheckpointAt(reminder, "U123", reminder.DeadlineAt.Add(-59*time.Second)),
		"countdown_days":         blockkit.RenderCheckpointAt(inDays, "U123", t0),
		"decided_publish":        blockkit.RenderDecided(decided(criticalInstance(), checkpoints.Approve, "", nil)),
		"superseded":             blockkit.RenderSuperseded(planInstance()),
		"checkpoint_cancelled":   blockkit.RenderEnded(planInstance(), pipeline.StatusCancelled),
		"progress_running":       blockkit.RenderProgress(sampleRun(), now),
		"progress_waiting":       blockkit.RenderProgress(waiting, now),
		"progress_done":          blockkit.RenderProgress(finishedRun(), now),
		"report_complete":        blockkit.RenderFinished(finishedRun()),
		"report_partial":         blockkit.RenderFinished(partial),
		"report_failed":          blockkit.RenderFinished(failed),
		"report_cancelled":       blockkit.RenderFinished(cancelled),
		"help":                   blockkit.RenderHelp(),
		"status":                 blockkit.RenderStatus(waiting, now),
		"list":                   blockkit.RenderList([]*pipeline.Run{waiting, finishedRun()}, now),
		"list_empty":             blockkit.RenderList(nil, now),
		"error":                  blockkit.RenderError("I couldn't find run `x`.", "`/research list` shows your runs."),
		"cancel_confirm":         blockkit.RenderCancelConfirm(sampleRun()),
		"invite_help":            blockkit.RenderInviteHelp("C999"),
		"invite_help_dm":         blockkit.RenderInviteHelp("D999"),
		"not_allowed":            notAllowed(sampleRun()),
		"already_decided":        alreadyDecided(decided(planInstance(), checkpoints.Approve, "", nil)),
		"superseded_click":       superseded(sampleRun()),
		"approve_refused":        approveRefused(allTypesInstance(), []checkpoints.FieldError{{Key: "title"}, {Key: "nolabel"}}),
		"validation_problem":     blockkit.RenderFieldProblems([]checkpoints.FieldError{{Key: "queries", Message: "This is required"}, {Key: "depth", Message: `"deep" is not one of the options`}}),
		"rate_limited":           blockkit.RenderError(limitMessage(&LimitedError{Scope: "user", Limit: RateLimits{}.withDefaults().PerUser, RetryAfter: 12*time.Minute + 3*time.Second}, t0), ""),
		"rate_limited_team":      blockkit.RenderError(limitMessage(&LimitedError{Scope: "workspace", Limit: RateLimits{}.withDefaults().PerWorkspace, RetryAfter: 40 * time.Second}, t0), ""),
	}
	for name, blocks := range cases {
		t.Run(name, func(t *testing.T) {
			golden(t, "msg_"+name, msg(blocks))
			if probs := blockProblems(blocks, blockkit.MaxBlocks); len(probs) > 0 {
				t.Errorf("limits: %v", probs)
			}
		})
	}
}

func TestGoldenModals(t *testing.T) {
	cases := map[string]slack.ModalViewRequest{
		"edit_plan":      blockkit.EditModal(planInstance()),
		"edit_sources":   blockkit.EditModal(sourcesInstance()),
		"edit_draft":     blockkit.EditModal(draftInstance()),
		"edit_critical":  blockkit.EditModal(criticalInstance()),
		"edit_all_types": blockkit.EditModal(allTypesInstance()),
		"reject":         blockkit.RejectModal(planInstance()),
		"notice":         *blockkit.NoticeModal(superseded(sampleRun())),
	}
	for name, view := range cases {
		t.Run(name, func(t *testing.T) {
			golden(t, "modal_"+name, view)
			if probs := blockProblems(view.Blocks.BlockSet, blockkit.MaxModalBlocks); len(probs) > 0 {
				t.Errorf("limits: %v", probs)
			}
			if n := len([]rune(view.Title.Text)); n > blockkit.MaxModalTitle {
				t.Errorf("title has %d runes", n)
			}
		})
	}
}
