package scoring

func runHallucination(e *evaluation) { e.notScorable("not implemented yet") }
