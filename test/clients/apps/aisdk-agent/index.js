// A Vercel AI SDK 7 agent loop (generateText with one tool and stopWhen),
// traced by @ai-sdk/otel through the OpenTelemetry NodeSDK, which exports
// OTLP/HTTP to OTEL_EXPORTER_OTLP_ENDPOINT.
import { NodeSDK } from '@opentelemetry/sdk-node';
import { OpenTelemetry } from '@ai-sdk/otel';
import { generateText, registerTelemetry, stepCountIs, tool } from 'ai';
import { openai } from '@ai-sdk/openai';
import { z } from 'zod';
import shared from '../../shared/scenario.cjs';

const { scenario, getOrderStatus } = shared;

const sdk = new NodeSDK();
sdk.start();
registerTelemetry(new OpenTelemetry());

try {
  const result = await generateText({
    model: openai(scenario.model),
    system: scenario.system,
    prompt: scenario.tool.question,
    tools: {
      [scenario.tool.name]: tool({
        description: scenario.tool.description,
        inputSchema: z.object({ orderId: z.string().describe('The order number.') }),
        execute: async ({ orderId }) => getOrderStatus({ orderId }),
      }),
    },
    stopWhen: stepCountIs(5),
  });
  console.log(result.text);
} finally {
  await sdk.shutdown();
}
