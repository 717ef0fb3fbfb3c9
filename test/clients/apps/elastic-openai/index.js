// Elastic's instrumentation of the openai SDK, set up as its README says:
// NodeSDK, configured by the OTEL_* environment (OTLP/HTTP traces and logs),
// content capture on.
'use strict';

const { NodeSDK } = require('@opentelemetry/sdk-node');
const { OpenAIInstrumentation } = require('@elastic/opentelemetry-instrumentation-openai');

const sdk = new NodeSDK({
  instrumentations: [new OpenAIInstrumentation({ captureMessageContent: true })],
});
sdk.start();

const { OpenAI } = require('openai');
const { chatWithTool } = require('../../shared/scenario.cjs');

async function main() {
  try {
    console.log(await chatWithTool(new OpenAI()));
  } finally {
    await sdk.shutdown();
  }
}
main().catch((err) => { console.error(err); process.exitCode = 1; });
