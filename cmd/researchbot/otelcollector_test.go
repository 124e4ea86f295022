package main

import (
	"os"
	"slices"
	"testing"

	"go.yaml.in/yaml/v4"
)

// TestOtelCollectorSampleReceivesOTLPHTTP: the sample collector
// configuration (deploy/otel-collector.yaml) receives OTLP over HTTP on the
// port researchbot's exporter uses by default, and its traces pipeline names
// only receivers, processors and exporters it defines.
func TestOtelCollectorSampleReceivesOTLPHTTP(t *testing.T) {
	data, err := os.ReadFile("../../deploy/otel-collector.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Receivers struct {
			OTLP struct {
				Protocols struct {
					HTTP *struct {
						Endpoint string `yaml:"endpoint"`
					} `yaml:"http"`
				} `yaml:"protocols"`
			} `yaml:"otlp"`
		} `yaml:"receivers"`
		Processors map[string]any `yaml:"processors"`
		Exporters  map[string]any `yaml:"exporters"`
		Service    struct {
			Pipelines map[string]struct {
				Receivers  []string `yaml:"receivers"`
				Processors []string `yaml:"processors"`
				Exporters  []string `yaml:"exporters"`
			} `yaml:"pipelines"`
		} `yaml:"service"`
	}
	if err := yaml.Unmarshal(data, &c); err != nil {
		t.Fatal(err)
	}
	if h := c.Receivers.OTLP.Protocols.HTTP; h == nil || h.Endpoint != "0.0.0.0:4318" {
		t.Fatalf("the otlp receiver does not listen for HTTP on 4318: %+v", h)
	}
	traces, ok := c.Service.Pipelines["traces"]
	if !ok || !slices.Equal(traces.Receivers, []string{"otlp"}) || len(traces.Exporters) == 0 {
		t.Fatalf("traces pipeline = %+v", traces)
	}
	for _, p := range traces.Processors {
		if _, ok := c.Processors[p]; !ok {
			t.Errorf("the traces pipeline names processor %q, which is not defined", p)
		}
	}
	for _, e := range traces.Exporters {
		if _, ok := c.Exporters[e]; !ok {
			t.Errorf("the traces pipeline names exporter %q, which is not defined", e)
		}
	}
}
