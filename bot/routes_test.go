package bot

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/redisstore"
)

func TestRoutesPickTheMostSpecificHandler(t *testing.T) {
	r := NewRoutes()
	hit := ""
	h := func(name string) Handler {
		return func(context.Context, *Request) error { hit = name; return nil }
	}
	r.Action("st_delete_confirm", h("exact"))
	r.ActionPrefix("st_", h("short"))
	r.ActionPrefix("st_pick_", h("long"))
	for id, want := range map[string]string{"st_delete_confirm": "exact", "st_pick_3": "long", "st_skip": "short", "cp_approve": ""} {
		hit = ""
		if got := r.action(id); got != nil {
			_ = got(context.Background(), &Request{})
		}
		if hit != want {
			t.Errorf("action %q went to %q, want %q", id, hit, want)
		}
	}
	if r.command(CmdStatus) != nil || r.view("nope") != nil || r.event("message") != nil {
		t.Error("an unregistered route has a handler")
	}
}

func TestRoutesRefuseTwoHandlersForOneKey(t *testing.T) {
	for name, reg := range map[string]func(r *Routes, h Handler){
		"command": func(r *Routes, h Handler) { r.Command(CmdList, h) },
		"action":  func(r *Routes, h Handler) { r.Action("a", h) },
		"prefix":  func(r *Routes, h Handler) { r.ActionPrefix("p_", h) },
		"view":    func(r *Routes, h Handler) { r.View("v", h) },
		"event":   func(r *Routes, h Handler) { r.Event("message", h) },
		"form": func(r *Routes, h Handler) {
			r.FormAction("f", slack.ModalViewRequest{}, func(ctx context.Context, req *Request) (slack.ModalViewRequest, func(context.Context), error) {
				return slack.ModalViewRequest{}, nil, h(ctx, req)
			})
		},
	} {
		t.Run(name, func(t *testing.T) {
			r := NewRoutes()
			h := func(context.Context, *Request) error { return nil }
			reg(r, h)
			defer func() {
				if recover() == nil {
					t.Error("a second handler for the same key was accepted")
				}
			}()
			reg(r, h)
		})
	}
}

// failingFeature registers buttons whose handlers fail, as a feature in
// another file would.
type failingFeature struct{}

func (failingFeature) Register(r *Routes) {
	r.Action("test_refused", func(context.Context, *Request) error {
		return Tell(blockkit.RenderError("Only the owner can press this.", "Nothing was changed."), "Not allowed")
	})
	r.Action("test_broken", func(context.Context, *Request) error {
		return errors.New("store: connection reset by peer")
	})
}

// TestE2EHandlerErrorsAreToldInOnePlace: a handler's *UserError reaches the
// clicker as it is; any other error is logged and the clicker gets a generic
// message that does not leak it.
func TestE2EHandlerErrorsAreToldInOnePlace(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Features = []Registrar{failingFeature{}} })
	ctx, cancel := context.WithTimeout(h.ctx, 5*time.Second)
	defer cancel()
	ts, err := h.app.send.Post(ctx, chanIn, "", []slack.Block{slack.NewActionBlock("b",
		slack.NewButtonBlockElement("test_refused", "x", blockkit.Plain("Refused", 75)),
		slack.NewButtonBlockElement("test_broken", "y", blockkit.Plain("Broken", 75)))}, "buttons")
	if err != nil {
		t.Fatal(err)
	}
	m := h.message(ts)
	h.click(requester, m, "test_refused")
	h.waitFor("the refusal", func() bool { return h.ephemeralTo(requester, "Only the owner can press this.") })
	h.click(stranger, m, "test_broken")
	h.waitFor("the generic answer", func() bool { return h.ephemeralTo(stranger, "Something went wrong on my side") })
	if h.ephemeralTo(stranger, "connection reset") {
		t.Error("the internal error was shown to the person")
	}
	if !strings.Contains(h.logs.String(), "connection reset by peer") {
		t.Error("the internal error was not logged")
	}
}

// TestOneWebAPIClient: the App and the Presenter given one Sender speak
// through its client; neither makes its own (the streams feature given it
// too: bot/streams' TestOneWebAPIClient).
func TestOneWebAPIClient(t *testing.T) {
	send := NewSender(SenderConfig{BotToken: "xoxb-1", AppToken: "xapp-1", APIURL: "http://127.0.0.1:1/api/"})
	_, rdb := redistest.Start(t)
	a, err := New(Config{AppToken: "xapp-1", BotToken: "xoxb-1", Sender: send, Engine: newFakeEngine(nil), Memory: redisstore.NewSlackMemory(rdb), Budget: redisstore.NewRateLimiter(rdb, "slack")})
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPresenter(PresenterConfig{Sender: send, Memory: redisstore.NewSlackMemory(rdb)})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if a.send != send || p.send != send {
		t.Error("a second Web API client was made")
	}
}

// TestAFormOpensOnThePoolWhenTheFastPathIsFull: when every slot of the
// forms' fast path is taken, a click on Edit is served by its Action route
// on the pool (bot/decisions registers both), and its form still opens.
func TestAFormOpensOnThePoolWhenTheFastPathIsFull(t *testing.T) {
	h := newHarness(t, nil)
	plan := h.startRun("what is RAG?")
	for range cap(h.app.formSlots) {
		h.app.formSlots <- struct{}{}
	}
	h.click(requester, plan, blockkit.ActionEdit)
	h.waitFor("the Edit form", func() bool { return len(h.fake.Views()) == 1 })
	if v := h.fake.Views()[0]; v.Method != "views.open" || !strings.Contains(string(v.JSON), `"callback_id":"`+blockkit.CallbackEdit+`"`) {
		t.Errorf("view = %s %s", v.Method, v.JSON)
	}
	if len(h.app.formSlots) != cap(h.app.formSlots) {
		t.Error("the click took a slot of the full fast path")
	}
	for range cap(h.app.formSlots) {
		<-h.app.formSlots
	}
}
