// Traceloop OpenLLMetry's instrumentation of the openai SDK, set up as its
// README says: a NodeTracerProvider and registerInstrumentations, spans
// batched (BatchSpanProcessor) to OTEL_EXPORTER_OTLP_ENDPOINT over OTLP/HTTP.
'use strict';

const { NodeTracerProvider, BatchSpanProcessor } = require('@opentelemetry/sdk-trace-node');
const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-proto');
const { resourceFromAttributes } = require('@opentelemetry/resources');
const { registerInstrumentations } = require('@opentelemetry/instrumentation');
const { OpenAIInstrumentation } = require('@traceloop/instrumentation-openai');

const provider = new NodeTracerProvider({
  resource: resourceFromAttributes({ 'service.name': process.env.OTEL_SERVICE_NAME }),
  spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
});
provider.register();
registerInstrumentations({ instrumentations: [new OpenAIInstrumentation()] });

const { OpenAI } = require('openai');
const { chatWithTool } = require('../../shared/scenario.cjs');

async function main() {
  try {
    console.log(await chatWithTool(new OpenAI()));
  } finally {
    await provider.shutdown();
  }
}
main().catch((err) => { console.error(err); process.exitCode = 1; });
