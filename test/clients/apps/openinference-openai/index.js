// Arize OpenInference's instrumentation of the openai SDK, set up as its docs
// say: a NodeTracerProvider exporting each span as it ends (SimpleSpanProcessor)
// over OTLP/HTTP (protobuf) to OTEL_EXPORTER_OTLP_ENDPOINT.
'use strict';

const { NodeTracerProvider, SimpleSpanProcessor } = require('@opentelemetry/sdk-trace-node');
const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-proto');
const { resourceFromAttributes } = require('@opentelemetry/resources');
const { registerInstrumentations } = require('@opentelemetry/instrumentation');
const { OpenAIInstrumentation } = require('@arizeai/openinference-instrumentation-openai');

const provider = new NodeTracerProvider({
  resource: resourceFromAttributes({ 'service.name': process.env.OTEL_SERVICE_NAME }),
  spanProcessors: [new SimpleSpanProcessor(new OTLPTraceExporter())],
});
provider.register();
registerInstrumentations({ instrumentations: [new OpenAIInstrumentation()] });

const { context } = require('@opentelemetry/api');
const { setSession } = require('@arizeai/openinference-core');
const { OpenAI } = require('openai');
const { scenario, chatWithTool, conversation, chatConversation } = require('../../shared/scenario.cjs');

async function main() {
  try {
    if (conversation()) {
      // OpenInference's session: setSession puts session.id into the
      // context, and the instrumentation writes it on every span it starts.
      const answers = await chatConversation(new OpenAI(), (n, run) =>
        context.with(setSession(context.active(), { sessionId: scenario.conversation.id }), run));
      console.log(answers.join('\n'));
      return;
    }
    console.log(await chatWithTool(new OpenAI()));
  } finally {
    await provider.shutdown();
  }
}
main().catch((err) => { console.error(err); process.exitCode = 1; });
