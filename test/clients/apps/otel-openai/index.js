// The official OpenTelemetry JS instrumentation of the openai SDK, set up as
// its README says: NodeSDK, configured by the OTEL_* environment (OTLP/HTTP
// traces and logs; content capture by
// OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true).
'use strict';

const { NodeSDK } = require('@opentelemetry/sdk-node');
const { OpenAIInstrumentation } = require('@opentelemetry/instrumentation-openai');

const sdk = new NodeSDK({ instrumentations: [new OpenAIInstrumentation()] });
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
