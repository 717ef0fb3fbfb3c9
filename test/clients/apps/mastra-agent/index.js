// A Mastra agent with one tool. Mastra's AI tracing is exported by
// @mastra/otel-exporter to the generic ("custom") OTLP/HTTP endpoint in
// OTEL_EXPORTER_OTLP_ENDPOINT, as the exporter's docs say; the model is
// Mastra's model router id, pointed at the fake app model by OPENAI_BASE_URL.
import { Mastra } from '@mastra/core/mastra';
import { Agent } from '@mastra/core/agent';
import { createTool } from '@mastra/core/tools';
import { Observability } from '@mastra/observability';
import { OtelExporter } from '@mastra/otel-exporter';
import { z } from 'zod';
import shared from '../../shared/scenario.cjs';

const { scenario, getOrderStatus, conversation } = shared;

const orderStatus = createTool({
  id: scenario.tool.name,
  description: scenario.tool.description,
  inputSchema: z.object({ orderId: z.string().describe('The order number.') }),
  execute: async ({ orderId }) => getOrderStatus({ orderId }),
});

const supportAgent = new Agent({
  id: 'support-agent',
  name: 'support-agent',
  instructions: scenario.system,
  model: `openai/${scenario.model}`,
  tools: { [scenario.tool.name]: orderStatus },
});

const mastra = new Mastra({
  agents: { supportAgent },
  observability: new Observability({
    configs: {
      otel: {
        serviceName: process.env.OTEL_SERVICE_NAME,
        exporters: [
          new OtelExporter({
            provider: { custom: { endpoint: process.env.OTEL_EXPORTER_OTLP_ENDPOINT, protocol: 'http/json' } },
          }),
        ],
      },
    },
  }),
});

try {
  if (conversation()) {
    // Mastra's thread: each turn names its thread (and the user, Mastra's
    // resource) in the memory option; the agent gets the turns so far.
    const messages = [];
    for (const turn of scenario.conversation.turns) {
      messages.push({ role: 'user', content: turn.question });
      const result = await mastra.getAgent('supportAgent').generate([...messages], {
        memory: { thread: scenario.conversation.id, resource: 'customer-1042' },
      });
      messages.push({ role: 'assistant', content: result.text });
      console.log(result.text);
    }
  } else {
    const result = await mastra.getAgent('supportAgent').generate(scenario.tool.question);
    console.log(result.text);
  }
} finally {
  await mastra.shutdown();
}
