// Traceloop OpenLLMetry's LlamaIndex instrumentation, set up as its README
// says: a NodeTracerProvider and registerInstrumentations before llamaindex
// is loaded, spans batched (BatchSpanProcessor) to OTEL_EXPORTER_OTLP_ENDPOINT
// over OTLP/HTTP (protobuf).
'use strict';

const { NodeTracerProvider, BatchSpanProcessor } = require('@opentelemetry/sdk-trace-node');
const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-proto');
const { resourceFromAttributes } = require('@opentelemetry/resources');
const { registerInstrumentations } = require('@opentelemetry/instrumentation');
const { LlamaIndexInstrumentation } = require('@traceloop/instrumentation-llamaindex');

const provider = new NodeTracerProvider({
  resource: resourceFromAttributes({ 'service.name': process.env.OTEL_SERVICE_NAME }),
  spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
});
provider.register();
registerInstrumentations({ instrumentations: [new LlamaIndexInstrumentation()] });

const { Document, Settings, VectorStoreIndex } = require('llamaindex');
const { OpenAI, OpenAIEmbedding } = require('@llamaindex/openai');
const { scenario } = require('../../shared/scenario.cjs');

// answerFromIndex indexes the scenario's documents (embedded by the fake
// app model) and asks the question through a context chat engine: the two
// nearest documents go into the system message after the system prompt.
async function answerFromIndex() {
  Settings.llm = new OpenAI({ model: scenario.model });
  Settings.embedModel = new OpenAIEmbedding({ model: scenario.embeddingModel });
  const index = await VectorStoreIndex.fromDocuments(
    scenario.rag.documents.map((text) => new Document({ text })),
  );
  const engine = index.asChatEngine({ similarityTopK: scenario.rag.retrieved, systemPrompt: scenario.system });
  const response = await engine.chat({ message: scenario.rag.question });
  return response.message.content;
}

async function main() {
  try {
    console.log(await answerFromIndex());
  } finally {
    await provider.shutdown();
  }
}
main().catch((err) => { console.error(err); process.exitCode = 1; });
