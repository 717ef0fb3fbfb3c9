// The LangChain JS RAG chain both LangChain apps run: an in-memory vector
// store over the scenario's documents (embedded by the fake app model), a
// retriever inside a RunnableMap, a prompt that puts the retrieved documents
// into the system message, ChatOpenAI and a string parser. The span tree:
// RunnableSequence > RunnableMap > RunnableSequence > VectorStoreRetriever,
// and ChatOpenAI under the root RunnableSequence.
'use strict';

const { scenario } = require('./scenario.cjs');

// answerFromDocuments runs the chain with the LangChain packages the app
// resolves (appRequire is the app's own require: each app has its own
// node_modules).
async function answerFromDocuments(appRequire) {
  const { ChatOpenAI, OpenAIEmbeddings } = appRequire('@langchain/openai');
  const { MemoryVectorStore } = appRequire('@langchain/classic/vectorstores/memory');
  const { Document } = appRequire('@langchain/core/documents');
  const { ChatPromptTemplate } = appRequire('@langchain/core/prompts');
  const { RunnableSequence, RunnableMap, RunnablePassthrough } = appRequire('@langchain/core/runnables');
  const { StringOutputParser } = appRequire('@langchain/core/output_parsers');
  const store = await MemoryVectorStore.fromDocuments(
    scenario.rag.documents.map((text) => new Document({ pageContent: text })),
    new OpenAIEmbeddings({ model: scenario.embeddingModel }),
  );
  const retriever = store.asRetriever({ k: scenario.rag.retrieved });
  const prompt = ChatPromptTemplate.fromMessages([
    ['system', `${scenario.system}\n\nDocuments:\n{context}`],
    ['human', '{question}'],
  ]);
  const chain = RunnableSequence.from([
    RunnableMap.from({
      context: retriever.pipe((docs) => docs.map((d) => d.pageContent).join('\n\n')),
      question: new RunnablePassthrough(),
    }),
    prompt,
    new ChatOpenAI({ model: scenario.model }),
    new StringOutputParser(),
  ]);
  const answer = await chain.invoke(scenario.rag.question);
  // LangChain runs callbacks (and so the tracers) in the background: a
  // short-lived script waits for them before it shuts its exporter down, as
  // LangChain's docs say, or the root chain's span is never ended.
  await appRequire('@langchain/core/callbacks/promises').awaitAllCallbacks();
  return answer;
}

module.exports = { answerFromDocuments };
