// The conversation every app has with the fake app model (scenario.json), so
// that the Go test can predict what the judge must see. Nothing here touches
// OpenTelemetry: each app sets up its library as that library's docs say.
'use strict';

const scenario = require('../scenario.json');

// getOrderStatus is the apps' one tool: it returns the document that grounds
// the tool apps' answer.
function getOrderStatus({ orderId }) {
  if (orderId !== scenario.tool.arguments.orderId) {
    throw new Error(`unknown order ${orderId}`);
  }
  return scenario.tool.result;
}

const orderTool = {
  type: 'function',
  function: {
    name: scenario.tool.name,
    description: scenario.tool.description,
    parameters: {
      type: 'object',
      properties: { orderId: { type: 'string', description: 'The order number.' } },
      required: ['orderId'],
      additionalProperties: false,
    },
  },
};

// chatWithTool is the usual function-calling loop of the openai SDK: ask,
// run the tool the model asks for, ask again with its result.
async function chatWithTool(client) {
  const messages = [
    { role: 'system', content: scenario.system },
    { role: 'user', content: scenario.tool.question },
  ];
  for (let step = 0; step < 4; step++) {
    const completion = await client.chat.completions.create({
      model: scenario.model,
      messages,
      tools: [orderTool],
    });
    const message = completion.choices[0].message;
    if (!message.tool_calls || message.tool_calls.length === 0) {
      return message.content;
    }
    messages.push(message);
    for (const call of message.tool_calls) {
      const result = getOrderStatus(JSON.parse(call.function.arguments));
      messages.push({ role: 'tool', tool_call_id: call.id, content: result });
    }
  }
  throw new Error('the model kept asking for tools');
}

// conversation reports whether the app runs the multi-turn conversation of
// scenario.json instead of its single flow (CLIENT_SCENARIO=conversation).
function conversation() {
  return process.env.CLIENT_SCENARIO === 'conversation';
}

// chatConversation has the conversation of scenario.json with the openai
// SDK, as a chat app does: every request resends the system prompt and the
// turns so far. turn(n, run) wraps each turn's request, so that an app can
// give it its library's conversation id; it returns the answers.
async function chatConversation(client, turn) {
  const messages = [{ role: 'system', content: scenario.system }];
  const answers = [];
  for (const [n, t] of scenario.conversation.turns.entries()) {
    messages.push({ role: 'user', content: t.question });
    const answer = await turn(n, async () => {
      const completion = await client.chat.completions.create({ model: scenario.model, messages: [...messages] });
      return completion.choices[0].message.content;
    });
    messages.push({ role: 'assistant', content: answer });
    answers.push(answer);
  }
  return answers;
}

module.exports = { scenario, getOrderStatus, chatWithTool, conversation, chatConversation };
