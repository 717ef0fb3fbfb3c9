// One Vercel AI SDK 7 generateText call, traced by @ai-sdk/otel through the
// OpenTelemetry NodeSDK, which exports OTLP/HTTP to OTEL_EXPORTER_OTLP_ENDPOINT.
import { NodeSDK } from '@opentelemetry/sdk-node';
import { OpenTelemetry } from '@ai-sdk/otel';
import { generateText, registerTelemetry } from 'ai';
import { openai } from '@ai-sdk/openai';
import shared from '../../shared/scenario.cjs';

const { scenario, conversation } = shared;

const sdk = new NodeSDK();
sdk.start();
// runtimeContext: the call's runtime context, as far as each call lets it
// into telemetry (includeRuntimeContext), becomes ai.settings.context.*.
registerTelemetry(new OpenTelemetry({ runtimeContext: true }));

try {
  if (conversation()) {
    // The chat's session id travels in the runtime context of each call.
    const messages = [];
    for (const turn of scenario.conversation.turns) {
      messages.push({ role: 'user', content: turn.question });
      const result = await generateText({
        model: openai(scenario.model),
        system: scenario.system,
        messages: [...messages],
        runtimeContext: { sessionId: scenario.conversation.id },
        telemetry: { includeRuntimeContext: { sessionId: true } },
      });
      messages.push({ role: 'assistant', content: result.text });
      console.log(result.text);
    }
  } else {
    const result = await generateText({
      model: openai(scenario.model),
      system: scenario.system,
      prompt: scenario.plain.question,
    });
    console.log(result.text);
  }
} finally {
  await sdk.shutdown();
}
