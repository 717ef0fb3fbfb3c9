// One Vercel AI SDK 7 generateText call, traced by @ai-sdk/otel through the
// OpenTelemetry NodeSDK, which exports OTLP/HTTP to OTEL_EXPORTER_OTLP_ENDPOINT.
import { NodeSDK } from '@opentelemetry/sdk-node';
import { OpenTelemetry } from '@ai-sdk/otel';
import { generateText, registerTelemetry } from 'ai';
import { openai } from '@ai-sdk/openai';
import shared from '../../shared/scenario.cjs';

const { scenario } = shared;

const sdk = new NodeSDK();
sdk.start();
registerTelemetry(new OpenTelemetry());

try {
  const result = await generateText({
    model: openai(scenario.model),
    system: scenario.system,
    prompt: scenario.plain.question,
  });
  console.log(result.text);
} finally {
  await sdk.shutdown();
}
