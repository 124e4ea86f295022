package blockkit

import (
	"fmt"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/pipeline"
)

// MaxStartFiles is how many files the start form takes: Slack's most for
// a file_input element (10), within a run's pipeline.MaxFiles.
const MaxStartFiles = 10

// startFileTypes are the file extensions the start form offers, the kinds
// the bot reads (extract); Slack checks them for convenience only, so the
// bot checks each file's kind again.
var startFileTypes = []string{"pdf", "docx", "md", "markdown", "csv", "txt", "html", "htm", "xhtml"}

// startFilesInput is the start form's optional file_input: documents the
// run reads before it searches.
func startFilesInput() *slack.InputBlock {
	el := slack.NewFileInputBlockElement(StartInput).WithFileTypes(startFileTypes...).WithMaxFiles(min(MaxStartFiles, pipeline.MaxFiles))
	in := slack.NewInputBlock(startFilesBlock, Plain("Files", 2000),
		Plain(fmt.Sprintf("Documents to read first and cite by name: PDF, Word (.docx), Markdown, CSV, HTML or plain text, up to %d MiB each.", pipeline.MaxFilesBytes/4>>20), 2000), el)
	in.Optional = true
	return in
}
