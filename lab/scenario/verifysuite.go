package scenario

import (
	"fmt"
	"os"

	"gopkg.in/yaml.v3"

	"github.com/sluice-upf/sluice/internal/yamlfile"
)

// VerifySuite is the suite upflab verify runs (short: the one CI runs)
// against the UPF that upf gives, in the forms of a scenario's upf: key:
// "" for the suite's own (upfd, with the config its checks need), the
// word upfd or reference, or a YAML file that holds a upf: key (a scenario
// of that UPF, such as command.yaml) or is that key's mapping itself.
func VerifySuite(short bool, upf string) (*Scenario, error) {
	file, data := Verify(short)
	if upf == "" {
		return Parse(file, data)
	}
	node, err := upfNode(upf)
	if err != nil {
		return nil, err
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("scenario: the embedded %s does not parse: %w", file, err)
	}
	suite := root.Content[0]
	for i := 0; i+1 < len(suite.Content); i += 2 {
		if suite.Content[i].Value == "upf" {
			suite.Content[i+1] = node
		}
	}
	merged, err := yaml.Marshal(suite)
	if err != nil {
		return nil, err
	}
	// Errors name the merged text: the suite with the given upf: key.
	return Parse(fmt.Sprintf("%s with --upf %s", file, upf), merged)
}

// upfNode is the upf: value that --upf gives.
func upfNode(upf string) (*yaml.Node, error) {
	switch upf {
	case UPFBuiltIn, UPFReference:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: upf}, nil
	}
	data, err := os.ReadFile(upf)
	if err != nil {
		return nil, fmt.Errorf("--upf %s: want upfd, reference, or a YAML file with a upf: key (e.g. lab/scenario/command.yaml): %w", upf, err)
	}
	src := &yamlfile.Source{File: upf, Lines: map[string]int{}}
	root, err := src.Document(data, "a UPF's file is one")
	if err != nil {
		return nil, err
	}
	if root == nil || root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s: want a mapping with a upf: key, as a scenario's, or the upf: mapping itself (kind, command, config, ...)", upf)
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "upf" {
			return root.Content[i+1], nil
		}
	}
	return root, nil
}

// SetLab names the lab's namespaces NAME-smf, -gnb, -upf and -dn, as
// topology.name does, so that a run goes beside a lab of another name.
func (s *Scenario) SetLab(name string) error {
	n, err := parseName(24)(name)
	if err != nil {
		return fmt.Errorf("--lab: %w", err)
	}
	s.Topology.Name = n
	return nil
}
