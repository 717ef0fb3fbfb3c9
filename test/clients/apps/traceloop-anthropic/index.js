// Traceloop OpenLLMetry's instrumentation of the Anthropic SDK (0.80: the line it patches), set up as its
// README says: a NodeTracerProvider and registerInstrumentations, spans
// batched (BatchSpanProcessor)
// over OTLP/HTTP (protobuf) to OTEL_EXPORTER_OTLP_ENDPOINT.
'use strict';

const { NodeTracerProvider, BatchSpanProcessor } = require('@opentelemetry/sdk-trace-node');
const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-proto');
const { resourceFromAttributes } = require('@opentelemetry/resources');
const { registerInstrumentations } = require('@opentelemetry/instrumentation');
const { AnthropicInstrumentation } = require('@traceloop/instrumentation-anthropic');

const provider = new NodeTracerProvider({
  resource: resourceFromAttributes({ 'service.name': process.env.OTEL_SERVICE_NAME }),
  spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
});
provider.register();
registerInstrumentations({ instrumentations: [new AnthropicInstrumentation()] });

const Anthropic = require('@anthropic-ai/sdk');
const { messagesWithTool } = require('../../shared/anthropic.cjs');

async function main() {
  try {
    // ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY come from the environment.
    console.log(await messagesWithTool(new Anthropic()));
  } finally {
    await provider.shutdown();
  }
}
main().catch((err) => { console.error(err); process.exitCode = 1; });
