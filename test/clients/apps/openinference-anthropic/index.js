// Arize OpenInference's instrumentation of the Anthropic SDK, set up as its docs
// say: a NodeTracerProvider exporting each span as it ends (SimpleSpanProcessor)
// over OTLP/HTTP (protobuf) to OTEL_EXPORTER_OTLP_ENDPOINT.
'use strict';

const { NodeTracerProvider, SimpleSpanProcessor } = require('@opentelemetry/sdk-trace-node');
const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-proto');
const { resourceFromAttributes } = require('@opentelemetry/resources');
const { registerInstrumentations } = require('@opentelemetry/instrumentation');
const { AnthropicInstrumentation } = require('@arizeai/openinference-instrumentation-anthropic');

const provider = new NodeTracerProvider({
  resource: resourceFromAttributes({ 'service.name': process.env.OTEL_SERVICE_NAME }),
  spanProcessors: [new SimpleSpanProcessor(new OTLPTraceExporter())],
});
provider.register();
registerInstrumentations({ instrumentations: [new AnthropicInstrumentation()] });

const Anthropic = require('@anthropic-ai/sdk');
const { messagesWithTool } = require('../../shared/anthropic.cjs');

async function main() {
  try {
    // ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY come from the environment.
    // SDK 1.x also traces each request itself (metadata only, no content,
    // a child of the OpenInference span); off here, so that each call is one
    // generation span (see the README's note on this app).
    console.log(await messagesWithTool(new Anthropic({ openTelemetry: false })));
  } finally {
    await provider.shutdown();
  }
}
main().catch((err) => { console.error(err); process.exitCode = 1; });
