package roles

// Parts names the process's parts in stop order (the tests read them).
func (p *Process) Parts() []string {
	var names []string
	for s := range stages {
		for _, pt := range p.parts {
			if pt.stage == s {
				names = append(names, pt.name)
			}
		}
	}
	return names
}
