package report

// Header says which step a result belongs to.
type Header struct {
	Name  string `json:"name"`  // unique in the run; Compare matches steps by it
	Kind  string `json:"kind"`  // throughput, ndr, ping, cbr, subscribers, churn or restart
	Setup string `json:"setup"` // what the step did, in a few words
}

// Step is the results of one step; the field of its kind is set, or
// Error when the step failed.
type Step struct {
	Header
	Error       string           `json:"error,omitempty"`
	Throughput  []Measurement    `json:"throughput,omitempty"`
	NDR         []Search         `json:"ndr,omitempty"`
	Ping        []Ping           `json:"ping,omitempty"`
	CBR         []CBR            `json:"cbr,omitempty"`
	Subscribers []SubscriberLoad `json:"subscribers,omitempty"`
	Churn       *Churn           `json:"churn,omitempty"`
	Restart     *Restart         `json:"restart,omitempty"`
}

// hasResults says whether a step has results of its kind to compare.
func (s *Step) hasResults() bool {
	return s.Error == "" && (len(s.Throughput)+len(s.NDR)+len(s.Ping)+len(s.CBR)+len(s.Subscribers) > 0 || s.Churn != nil || s.Restart != nil)
}
