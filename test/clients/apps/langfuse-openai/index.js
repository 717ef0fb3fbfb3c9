// Langfuse's JS SDK (v4+ is built on OpenTelemetry): the openai client
// wrapped by observeOpenAI, so each completion is a Langfuse generation
// observation. The spans go through the app's own global NodeTracerProvider
// and a plain OTLP/HTTP exporter to OTEL_EXPORTER_OTLP_ENDPOINT, not through
// Langfuse's span processor: no Langfuse server is involved.
'use strict';

const { NodeTracerProvider, BatchSpanProcessor } = require('@opentelemetry/sdk-trace-node');
const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-proto');
const { resourceFromAttributes } = require('@opentelemetry/resources');

const provider = new NodeTracerProvider({
  resource: resourceFromAttributes({ 'service.name': process.env.OTEL_SERVICE_NAME }),
  spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
});
provider.register();

const { OpenAI } = require('openai');
const { observeOpenAI } = require('@langfuse/openai');
const { startActiveObservation, propagateAttributes } = require('@langfuse/tracing');
const { scenario, chatWithTool, conversation, chatConversation } = require('../../shared/scenario.cjs');

async function main() {
  try {
    if (conversation()) {
      // Langfuse's session: each turn is a trace whose root observation
      // propagateAttributes gives the session id (session.id); without
      // Langfuse's own span processor the generation below it does not
      // carry it.
      const answers = await chatConversation(observeOpenAI(new OpenAI()), (n, run) =>
        startActiveObservation('support-turn', () => propagateAttributes({ sessionId: scenario.conversation.id }, run)));
      console.log(answers.join('\n'));
      return;
    }
    console.log(await chatWithTool(observeOpenAI(new OpenAI())));
  } finally {
    await provider.shutdown();
  }
}
main().catch((err) => { console.error(err); process.exitCode = 1; });
