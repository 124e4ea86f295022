package checkpoints

// Field keys of the built-in definitions (Builtins). The definitions name
// their fields with them and the engine reads a decision's values with
// them, so a key is written once.
const (
	// After planning.
	KeySubQuestions = "sub_questions"
	KeyQueries      = "queries"
	KeySections     = "sections"
	KeyDepth        = "depth"
	KeyNote         = "note"
	// Source review.
	KeyRelevant = "relevant"
	KeyExclude  = "exclude"
	KeyFeedback = "feedback"
	// Critical issues.
	KeyGuidance = "guidance"
	// Before output (draft review).
	KeyTitle       = "title"
	KeyChanges     = "changes"
	KeyReadings    = "readings"
	KeyReadingNote = "reading_note"
	// Clarifying questions: one answer per question, and a reply in the
	// person's own words (a thread mention lands there).
	KeyAnswer1 = "answer_1"
	KeyAnswer2 = "answer_2"
	KeyAnswer3 = "answer_3"
	KeyReply   = "reply"
)

// AnswerKeys are the clarify checkpoint's answer fields, in question order.
var AnswerKeys = [MaxClarifyingQuestions]string{KeyAnswer1, KeyAnswer2, KeyAnswer3}
