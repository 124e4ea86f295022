package tracing

// Variable is one OTEL_* variable that Configure reads, as `researchbot
// env` lists it. The OpenTelemetry SDK reads further OTEL_* variables
// itself (sampler, headers, timeouts, resource attributes); docs/tracing.md
// lists those.
type Variable struct {
	Name, Default, Meaning string
}

// Variables lists, in the order people read them, every variable
// Configure reads.
func Variables() []Variable {
	return []Variable{
		{"OTEL_EXPORTER_OTLP_ENDPOINT", "", "base URL of the OTLP/HTTP receiver; traces go to its /v1/traces. Setting it turns tracing on"},
		{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "", "the full traces URL, used as is (wins over the base URL); setting it turns tracing on"},
		{"OTEL_TRACES_EXPORTER", "otlp when an endpoint is set", "otlp turns tracing on (default endpoint http://localhost:4318/v1/traces); none turns it off"},
		{"OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf", "only http/protobuf is supported: another value stops the program at start"},
		{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/protobuf", "as OTEL_EXPORTER_OTLP_PROTOCOL, for traces only"},
		{"OTEL_SERVICE_NAME", "researchbot", "the service.name of every span"},
		{"OTEL_SDK_DISABLED", "false", "true turns tracing off whatever else is set"},
	}
}
