package main

import (
	"fmt"

	"github.com/sluice-upf/sluice/internal/buildinfo"
)

func init() {
	register("version", "print upflab's version", runVersion)
}

func runVersion(args []string) error {
	if err := parseAll(flags("version", ""), args); err != nil {
		return err
	}
	fmt.Println("upflab", buildinfo.Version())
	return nil
}
