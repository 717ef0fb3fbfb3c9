// reference.mjs runs Mastra's own scorers (@mastra/evals) over the cases of
// cases.json with a scripted judge and prints their scores as JSON, one
// entry per case, for mastra_test.go to compare with ours.
//
// The scripted judge answers by schema: Mastra appends the step's JSON
// schema to the prompt, and the judge replies with the case's first reply
// that has every key the schema requires, cut down to the schema's
// properties. A step without a schema (the reason) gets a fixed sentence.
//
// Usage: node reference.mjs cases.json
import { readFileSync } from 'node:fs';
import * as prebuilt from '@mastra/evals/scorers/prebuilt';
import { createAgentTestRun, createTestMessage } from '@mastra/evals/scorers/utils';
import { MastraLanguageModelV2Mock } from '@mastra/core/test-utils/llm-mock';

// factories maps a case's scorer to the Mastra scorer it is compared with.
// Options other than scale come from the case (context for hallucination).
const factories = {
  bias: (model, c) => prebuilt.createBiasScorer({ model, options: { scale: c.scale } }),
  hallucination: (model, c) =>
    prebuilt.createHallucinationScorer({ model, options: { scale: c.scale, context: c.context ?? [] } }),
  answer_relevancy: (model, c) =>
    prebuilt.createAnswerRelevancyScorer({ model, options: { scale: c.scale, uncertaintyWeight: 0.3 } }),
  context_relevance: (model, c) =>
    prebuilt.createContextRelevanceScorerLLM({ model, options: { scale: c.scale, context: c.context ?? [] } }),
  toxicity: (model, c) => prebuilt.createToxicityScorer({ model, options: { scale: c.scale } }),
};

const schemaIntro = 'Return your response as JSON matching this schema:\n\n';

// promptText flattens a call's messages into one string.
function promptText(prompt) {
  return prompt
    .map((m) => (typeof m.content === 'string' ? m.content : m.content.map((p) => p.text ?? '').join('\n')))
    .join('\n');
}

// stepSchema is the JSON schema Mastra appended to the prompt, or null.
function stepSchema(text) {
  const at = text.lastIndexOf(schemaIntro);
  if (at < 0) return null;
  const rest = text.slice(at + schemaIntro.length);
  const end = rest.indexOf('\n\nReturn only valid JSON');
  return JSON.parse(end < 0 ? rest : rest.slice(0, end));
}

// fit keeps only what the schema describes, so a case may carry fields
// that one framework asks for and the other does not.
function fit(value, schema) {
  if (!schema || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => fit(v, schema.items));
  if (!schema.properties) return value;
  const out = {};
  for (const [k, sub] of Object.entries(schema.properties)) {
    if (k in value) out[k] = fit(value[k], sub);
  }
  return out;
}

function scriptedJudge(c, log) {
  const answer = (opts) => {
    const schema = stepSchema(promptText(opts.prompt));
    if (!schema) {
      log.push('reason');
      return 'The score is given because of the scripted verdicts.';
    }
    const required = schema.required ?? [];
    const reply = (c.replies ?? []).find((r) => required.every((k) => k in r));
    if (!reply) throw new Error(`case ${c.name}: no reply has the keys ${required.join(', ')}`);
    log.push(required.join(','));
    return JSON.stringify(fit(reply, schema));
  };
  const usage = { inputTokens: 1, outputTokens: 1, totalTokens: 2 };
  return new MastraLanguageModelV2Mock({
    doGenerate: async (opts) => ({
      content: [{ type: 'text', text: answer(opts) }],
      finishReason: 'stop',
      usage,
      warnings: [],
    }),
    doStream: async (opts) => {
      const text = answer(opts);
      return {
        stream: new ReadableStream({
          start(ctl) {
            ctl.enqueue({ type: 'stream-start', warnings: [] });
            ctl.enqueue({ type: 'text-start', id: 't' });
            ctl.enqueue({ type: 'text-delta', id: 't', delta: text });
            ctl.enqueue({ type: 'text-end', id: 't' });
            ctl.enqueue({ type: 'finish', finishReason: 'stop', usage });
            ctl.close();
          },
        }),
      };
    },
  });
}

async function score(c) {
  const make = factories[c.scorer];
  if (!make) return { name: c.name, error: `no Mastra scorer for ${c.scorer}` };
  const steps = [];
  try {
    const scorer = make(scriptedJudge(c, steps), c);
    const run = createAgentTestRun({
      inputMessages: [createTestMessage({ content: c.input ?? '', role: 'user', id: 'in' })],
      output: [createTestMessage({ content: c.output ?? '', role: 'assistant', id: 'out' })],
    });
    const res = await scorer.run({ input: run.input, output: run.output });
    return { name: c.name, score: res.score, steps };
  } catch (err) {
    return { name: c.name, error: String(err?.stack ?? err), steps };
  }
}

const file = process.argv[2];
if (!file) {
  console.error('usage: node reference.mjs cases.json');
  process.exit(2);
}
const { cases } = JSON.parse(readFileSync(file, 'utf8'));
const results = [];
for (const c of cases) results.push(await score(c));
process.stdout.write(JSON.stringify(results, null, 1) + '\n');
