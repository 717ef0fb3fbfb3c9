// The tool loop of the Anthropic SDK, used by the Anthropic apps: the system
// prompt as the separate `system` parameter, the tool offered with its input
// schema, the model's tool_use block run and sent back as a tool_result block
// in a user message. No OpenTelemetry code here.
'use strict';

const { scenario, getOrderStatus } = require('./scenario.cjs');

const orderTool = {
  name: scenario.tool.name,
  description: scenario.tool.description,
  input_schema: {
    type: 'object',
    properties: { orderId: { type: 'string', description: 'The order number.' } },
    required: ['orderId'],
  },
};

// messagesWithTool asks, runs the tools the model asks for, and asks again
// with their results, until the model answers in text.
async function messagesWithTool(client) {
  const messages = [{ role: 'user', content: scenario.tool.question }];
  for (let step = 0; step < 4; step++) {
    const reply = await client.messages.create({
      model: scenario.anthropicModel,
      max_tokens: 512,
      system: scenario.system,
      messages,
      tools: [orderTool],
    });
    const calls = reply.content.filter((block) => block.type === 'tool_use');
    if (calls.length === 0) {
      return reply.content.filter((block) => block.type === 'text').map((block) => block.text).join('');
    }
    messages.push({ role: 'assistant', content: reply.content });
    messages.push({
      role: 'user',
      content: calls.map((call) => ({ type: 'tool_result', tool_use_id: call.id, content: getOrderStatus(call.input) })),
    });
  }
  throw new Error('the model kept asking for tools');
}

module.exports = { messagesWithTool };
