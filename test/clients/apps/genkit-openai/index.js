// Genkit with its OpenAI-compatible plugin (@genkit-ai/compat-oai) pointed at
// OPENAI_BASE_URL. Genkit would set up its own OpenTelemetry SDK; the app
// turns that off (disableGenkitOTelInitialization) and registers its own
// global NodeTracerProvider, whose spans Genkit's tracer then writes:
// batched (BatchSpanProcessor) over OTLP/HTTP (protobuf) to
// OTEL_EXPORTER_OTLP_ENDPOINT.
'use strict';

const { disableGenkitOTelInitialization } = require('genkit/tracing');
const { NodeTracerProvider, BatchSpanProcessor } = require('@opentelemetry/sdk-trace-node');
const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-proto');
const { resourceFromAttributes } = require('@opentelemetry/resources');

disableGenkitOTelInitialization();
const provider = new NodeTracerProvider({
  resource: resourceFromAttributes({ 'service.name': process.env.OTEL_SERVICE_NAME }),
  spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
});
provider.register();

const { genkit, z } = require('genkit');
const { openAICompatible } = require('@genkit-ai/compat-oai');
const { scenario, getOrderStatus } = require('../../shared/scenario.cjs');

// answerWithTool lets Genkit's generate loop call the order tool and answer
// from its result.
async function answerWithTool() {
  const ai = genkit({
    plugins: [openAICompatible({ name: 'appmodel', apiKey: process.env.OPENAI_API_KEY, baseURL: process.env.OPENAI_BASE_URL })],
  });
  const orderStatus = ai.defineTool(
    {
      name: scenario.tool.name,
      description: scenario.tool.description,
      inputSchema: z.object({ orderId: z.string().describe('The order number.') }),
      outputSchema: z.string(),
    },
    async (input) => getOrderStatus(input),
  );
  const response = await ai.generate({
    model: `appmodel/${scenario.model}`,
    system: scenario.system,
    prompt: scenario.tool.question,
    tools: [orderStatus],
  });
  return response.text;
}

async function main() {
  try {
    console.log(await answerWithTool());
  } finally {
    await provider.shutdown();
  }
}
main().catch((err) => { console.error(err); process.exitCode = 1; });
