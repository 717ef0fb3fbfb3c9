// Traceloop OpenLLMetry's instrumentation of the openai SDK, set up as its
// README says: a NodeTracerProvider and registerInstrumentations, spans
// batched (BatchSpanProcessor) to OTEL_EXPORTER_OTLP_ENDPOINT over OTLP/HTTP.
// The conversation (CLIENT_SCENARIO=conversation) adds OpenLLMetry's
// node-server-sdk for its association properties; it is required only then,
// before the openai SDK is loaded (required first, the instrumentation
// patched nothing).
'use strict';

const { NodeTracerProvider, BatchSpanProcessor } = require('@opentelemetry/sdk-trace-node');
const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-proto');
const { resourceFromAttributes } = require('@opentelemetry/resources');
const { registerInstrumentations } = require('@opentelemetry/instrumentation');
const { OpenAIInstrumentation } = require('@traceloop/instrumentation-openai');

const { scenario, chatWithTool, conversation, chatConversation } = require('../../shared/scenario.cjs');

// In the conversation, OpenLLMetry's association properties name it: the
// node-server-sdk's span processor (createSpanProcessor, given our own
// exporter, as its docs say for an existing OpenTelemetry set-up) writes
// those of the context as traceloop.association.properties.<key>.
const sdk = conversation() ? require('@traceloop/node-server-sdk') : null;
const spanProcessor = sdk
  ? sdk.createSpanProcessor({ exporter: new OTLPTraceExporter() })
  : new BatchSpanProcessor(new OTLPTraceExporter());
const provider = new NodeTracerProvider({
  resource: resourceFromAttributes({ 'service.name': process.env.OTEL_SERVICE_NAME }),
  spanProcessors: [spanProcessor],
});
provider.register();
registerInstrumentations({ instrumentations: [new OpenAIInstrumentation()] });

const { OpenAI } = require('openai');

async function main() {
  try {
    if (conversation()) {
      const answers = await chatConversation(new OpenAI(), (n, run) =>
        sdk.withAssociationProperties({ session_id: scenario.conversation.id }, run));
      console.log(answers.join('\n'));
      return;
    }
    console.log(await chatWithTool(new OpenAI()));
  } finally {
    await provider.shutdown();
  }
}
main().catch((err) => { console.error(err); process.exitCode = 1; });
