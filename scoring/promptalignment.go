package scoring

func runPromptAlignment(e *evaluation) { e.notScorable("not implemented yet") }
