// A LangGraph JS agent under Arize OpenInference's LangChain instrumentation, set up
// as its README says:
// a NodeTracerProvider exporting each span as it ends (SimpleSpanProcessor)
// over OTLP/HTTP, and the callbacks manager module instrumented by hand.
'use strict';

const { NodeTracerProvider, SimpleSpanProcessor } = require('@opentelemetry/sdk-trace-node');
const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-proto');
const { resourceFromAttributes } = require('@opentelemetry/resources');
const { LangChainInstrumentation } = require('@arizeai/openinference-instrumentation-langchain');
const CallbackManagerModule = require('@langchain/core/callbacks/manager');

const provider = new NodeTracerProvider({
  resource: resourceFromAttributes({ 'service.name': process.env.OTEL_SERVICE_NAME }),
  spanProcessors: [new SimpleSpanProcessor(new OTLPTraceExporter())],
});
provider.register();
new LangChainInstrumentation().manuallyInstrument(CallbackManagerModule);

const { answerWithAgent } = require('../../shared/langgraph-agent.cjs');

async function main() {
  try {
    console.log(await answerWithAgent(require));
  } finally {
    await provider.shutdown();
  }
}
main().catch((err) => { console.error(err); process.exitCode = 1; });
