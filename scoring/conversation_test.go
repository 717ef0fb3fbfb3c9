package scoring

import (
	"reflect"
	"testing"
)

func TestCaseConversation(t *testing.T) {
	earlier := []Turn{{Role: RoleUser, Content: "hi"}, {Role: RoleAssistant, Content: "hello"}}
	tests := []struct {
		name string
		c    Case
		want []Turn
	}{
		{"turns only", Case{Turns: earlier}, earlier},
		{"input and output follow the turns", Case{Turns: earlier, Input: "q", Output: "a"},
			append(append([]Turn(nil), earlier...), Turn{Role: RoleUser, Content: "q"}, Turn{Role: RoleAssistant, Content: "a"})},
		{"a blank output adds no reply", Case{Turns: earlier, Input: "q", Output: "  "},
			append(append([]Turn(nil), earlier...), Turn{Role: RoleUser, Content: "q"})},
		{"one exchange without turns", Case{Input: "q", Output: "a"}, []Turn{{Role: RoleUser, Content: "q"}, {Role: RoleAssistant, Content: "a"}}},
		{"nothing", Case{}, nil},
		{"a cut input or output makes a cut turn", Case{Input: "q", Output: "a", Cut: []Field{FieldOutput}},
			[]Turn{{Role: RoleUser, Content: "q"}, {Role: RoleAssistant, Content: "a", Cut: true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.c.Conversation(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
	// The caller's turns are not written to.
	c := Case{Turns: earlier[:1:2], Input: "q"}
	_ = c.Conversation()
	if earlier[1].Content != "hello" {
		t.Error("Conversation wrote into the caller's turns")
	}
}

func TestTurnCountAndValidate(t *testing.T) {
	turns := []Turn{{Role: RoleUser, Content: "a"}, {Role: RoleOmitted, Count: 40}, {Role: RoleAssistant, Content: "b"}}
	if n := TurnCount(turns); n != 42 {
		t.Errorf("TurnCount = %d, want 42", n)
	}
	if err := ValidateTurns(turns); err != nil {
		t.Errorf("valid turns: %v", err)
	}
	for _, bad := range [][]Turn{
		{{Role: "system", Content: "be nice"}},
		{{Role: RoleOmitted}},
		{{Role: "", Content: "x"}},
	} {
		if err := ValidateTurns(bad); err == nil {
			t.Errorf("ValidateTurns(%+v) = nil, want an error", bad)
		}
	}
}
