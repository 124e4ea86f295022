package checkpoints

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

func TestInstanceJSONRoundTrip(t *testing.T) {
	def := testDef()
	def.Fields = append(def.Fields,
		Field{Key: "ok", Type: FieldCheckbox, Label: "OK"},
		Field{Key: "pick", Type: FieldMultiSelect, Label: "Pick", Options: []Option{{Value: "a"}, {Value: "b"}}, Default: []string{"a"}},
		Field{Key: "score", Type: FieldRange, Label: "Score", Min: ptr(0), Max: ptr(1)},
	)
	in := NewInstance(def, "ck1", "run1", json.RawMessage(`{"plan":{"steps":[1,2]}}`), nil, map[string]any{"title": "T"}, t0)
	if err := in.Offer(at(time.Minute), "bot"); err != nil {
		t.Fatal(err)
	}
	if err := in.Activate(at(2*time.Minute), "U1"); err != nil {
		t.Fatal(err)
	}
	err := in.Decide(Decision{Action: Edit, By: "U1", At: at(3*time.Minute + 123456789), Values: map[string]any{
		"tags": []any{"x", "y"}, "n": 2, "ok": "true", "pick": []any{"a", "b"}, "score": 0.25,
	}})
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var back Instance
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, in) {
		t.Fatalf("round trip changed the instance:\n got %#v\nwant %#v\njson %s", back, in, data)
	}
	if back.Timeout != time.Hour || !back.DeadlineAt.Equal(at(time.Minute+time.Hour)) || !back.DecidedAt.Equal(at(3*time.Minute+123456789)) {
		t.Fatalf("durations or times lost: %v %v %v", back.Timeout, back.DeadlineAt, back.DecidedAt)
	}
	if _, ok := back.Values["pick"].([]string); !ok {
		t.Fatalf("pick decoded as %T, want []string", back.Values["pick"])
	}
	// Decoded values validate to themselves.
	again, errs := Validate(back.Fields, back.Values)
	if errs != nil || !reflect.DeepEqual(again, back.Values) {
		t.Fatalf("revalidated %#v (%v), want %#v", again, errs, back.Values)
	}
	// The decoded instance still refuses a second decision.
	if err := back.Decide(Decision{Action: Approve, By: "U2", At: at(time.Hour)}); err == nil {
		t.Fatal("decoded instance accepted a second decision")
	}
}

func TestInstanceJSONPendingAndZeroTimes(t *testing.T) {
	in := NewInstance(testDef(), "ck", "run", nil, nil, nil, t0)
	data, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"offered_at", "deadline_at", "decided_at", "decision"} {
		if _, ok := raw[k]; ok {
			t.Errorf("pending instance encodes %q", k)
		}
	}
	var back Instance
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, in) {
		t.Fatalf("round trip changed the instance:\n got %#v\nwant %#v", back, in)
	}
	var empty Instance
	if err := json.Unmarshal([]byte(`{"id":"x"}`), &empty); err != nil || empty.Values == nil {
		t.Fatalf("decoded Values = %v (%v), want an empty map", empty.Values, err)
	}
	if err := json.Unmarshal([]byte(`{"id":`), &empty); err == nil {
		t.Fatal("malformed JSON accepted")
	}
}
