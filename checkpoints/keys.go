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
)
