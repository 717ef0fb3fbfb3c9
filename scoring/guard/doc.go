// Package guard protects a judge endpoint and the budget behind it. Each
// guard wraps the interface it protects, so they compose in any order:
//
//   - Breaker wraps a scoring.Judge and stops calling an endpoint that
//     keeps failing or refused the credentials;
//   - Limiter wraps a scoring.Judge and keeps calls under requests and
//     tokens per minute;
//   - Budget wraps a scoring.Judge and stops calling it once a period's
//     money is spent, without ever passing the amount;
//   - Fallback sends calls to a second judge while the first one's
//     circuit is open;
//   - Cache wraps a scoring.Scorer and answers a case it has scored
//     before without a judge call;
//   - SplitCache wraps a scoring.Splitter and answers a system prompt it
//     has split before without a judge call.
//
// A usual stack, outermost first, is cache -> scorer -> breaker -> limiter
// -> judge: a cache hit costs nothing and an open circuit fails at once
// instead of first waiting for rate budget.
package guard
