// A LangGraph JS ReAct agent (createReactAgent) whose one tool searches the
// scenario's documents: an in-memory vector store embedded by the fake app
// model, queried through its retriever. The model asks for the tool, the
// tool returns the retrieved documents, the model answers from them.
'use strict';

const { scenario } = require('./scenario.cjs');

// answerWithAgent builds and runs the graph with the packages the app
// resolves (appRequire is the app's own require).
async function answerWithAgent(appRequire) {
  const { ChatOpenAI, OpenAIEmbeddings } = appRequire('@langchain/openai');
  const { MemoryVectorStore } = appRequire('@langchain/classic/vectorstores/memory');
  const { Document } = appRequire('@langchain/core/documents');
  const { tool } = appRequire('@langchain/core/tools');
  const { createReactAgent } = appRequire('@langchain/langgraph/prebuilt');
  const { z } = appRequire('zod');
  const store = await MemoryVectorStore.fromDocuments(
    scenario.rag.documents.map((text) => new Document({ pageContent: text })),
    new OpenAIEmbeddings({ model: scenario.embeddingModel }),
  );
  const retriever = store.asRetriever({ k: scenario.rag.retrieved });
  const search = tool(
    // The tool's run config passed on, so the retriever's run is a child of
    // the tool's (as LangChain's docs say for nested runs).
    async ({ query }, config) => (await retriever.invoke(query, config)).map((d) => d.pageContent).join('\n\n'),
    {
      name: scenario.rag.tool.name,
      description: scenario.rag.tool.description,
      schema: z.object({ query: z.string().describe('What to search for.') }),
    },
  );
  const agent = createReactAgent({
    llm: new ChatOpenAI({ model: scenario.model }),
    tools: [search],
    prompt: scenario.system,
  });
  const result = await agent.invoke({ messages: [{ role: 'user', content: scenario.rag.question }] });
  await appRequire('@langchain/core/callbacks/promises').awaitAllCallbacks();
  return result.messages[result.messages.length - 1].content;
}

module.exports = { answerWithAgent };
